//! Running one of the models on one input.

use ort::session::Session;

/// Runs a model of one input `x` of `shape` on `input`: its first output's shape and values.
pub(crate) fn run(
    session: &mut Session,
    shape: [usize; 4],
    input: Vec<f32>,
) -> Result<(Vec<i64>, Vec<f32>), String> {
    let tensor = ort::value::Tensor::from_array((shape, input)).map_err(|e| e.to_string())?;
    let outputs = session
        .run(vec![("x", tensor.into_dyn())])
        .map_err(|e| e.to_string())?;
    let (shape, values) = outputs[0]
        .try_extract_tensor::<f32>()
        .map_err(|e| e.to_string())?;
    Ok((shape.to_vec(), values.to_vec()))
}
