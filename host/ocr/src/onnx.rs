//! Running one of the models on one input.

use ort::session::Session;

/// Runs a model of one input `x` of `shape` on `input` and hands its first output's shape and
/// values to `read`, in place (a recognition batch's output is tens of megabytes).
pub(crate) fn run<T>(
    session: &mut Session,
    shape: [usize; 4],
    input: Vec<f32>,
    read: impl FnOnce(&[i64], &[f32]) -> T,
) -> Result<T, String> {
    let tensor = ort::value::Tensor::from_array((shape, input)).map_err(|e| e.to_string())?;
    let outputs = session
        .run(vec![("x", tensor.into_dyn())])
        .map_err(|e| e.to_string())?;
    let (shape, values) = outputs[0]
        .try_extract_tensor::<f32>()
        .map_err(|e| e.to_string())?;
    Ok(read(shape, values))
}
