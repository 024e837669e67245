//! Turning a model's token vectors into one vector per text, as sentence-transformers does.

use std::path::Path;

use serde::Deserialize;

/// How token vectors become one vector (from the model's `1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pooling {
    /// The mean of the non-padding tokens (the default).
    Mean,
    /// The first token's vector.
    Cls,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
}

impl Pooling {
    /// The pooling the model directory asks for; mean when it says nothing.
    pub(crate) fn of_model(dir: &Path) -> Pooling {
        let file = dir.join("1_Pooling").join("config.json");
        let config = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<PoolingConfig>(&b).ok());
        match config {
            Some(c) if c.pooling_mode_cls_token => Pooling::Cls,
            _ => Pooling::Mean,
        }
    }

    /// Pools `tokens` (`len` vectors of `dims`, row-major) whose first `used` are real tokens,
    /// and scales the result to unit length.
    pub(crate) fn pool(self, tokens: &[f32], dims: usize, used: usize) -> Vec<f32> {
        let mut out = vec![0f32; dims];
        match self {
            Pooling::Cls => out.copy_from_slice(&tokens[..dims]),
            Pooling::Mean => {
                for row in tokens.chunks_exact(dims).take(used.max(1)) {
                    for (o, v) in out.iter_mut().zip(row) {
                        *o += v;
                    }
                }
            }
        }
        normalize(&mut out);
        out
    }
}

/// Scales `v` to unit length (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_ignores_padding_and_normalises() {
        // Two real tokens and one padding token of 2 dimensions.
        let tokens = [1.0, 0.0, 3.0, 0.0, 100.0, 100.0];
        assert_eq!(Pooling::Mean.pool(&tokens, 2, 2), vec![1.0, 0.0]);
        assert_eq!(
            Pooling::Cls.pool(&[0.0, 2.0, 5.0, 5.0], 2, 2),
            vec![0.0, 1.0]
        );
    }
}
