//! Running one of the models on one input.

use ort::session::{RunOptions, Session};

/// Runs a model of one input `x` of `shape` on `input` and hands its first output's shape and
/// values to `read`, in place (a recognition batch's output is tens of megabytes).
///
/// The run's tensors come from the session's arena, which is shrunk when the run ends: a run
/// reuses its own buffers from one operator to the next (a third faster than asking the system
/// for each), and keeps none of them once done but its output ([`settle`]).
pub(crate) fn run<T>(
    session: &mut Session,
    shape: [usize; 4],
    input: Vec<f32>,
    read: impl FnOnce(&[i64], &[f32]) -> T,
) -> Result<T, String> {
    let tensor = ort::value::Tensor::from_array((shape, input)).map_err(|e| e.to_string())?;
    let mut options = RunOptions::new().map_err(|e| e.to_string())?;
    options
        .set("memory.enable_memory_arena_shrinkage", "cpu:0")
        .map_err(|e| e.to_string())?;
    let outputs = session
        .run_with_options(vec![("x", tensor.into_dyn())], &options)
        .map_err(|e| e.to_string())?;
    let (shape, values) = outputs[0]
        .try_extract_tensor::<f32>()
        .map_err(|e| e.to_string())?;
    Ok(read(shape, values))
}

/// Lets the session's arena go of the last run's output. The arena is shrunk when a run ends,
/// while its output is still held, so the region holding the output would stay until the next
/// run (a hundred megabytes, while pages wait): a run on a tiny blank input of `shape` is that
/// next run.
pub(crate) fn settle(session: &mut Session, shape: [usize; 4]) -> Result<(), String> {
    run(session, shape, vec![0.0; shape.iter().product()], |_, _| ())
}
