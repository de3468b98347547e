//! The plain-Rust one-hidden-layer MLP: one position at a time, from the
//! input-major [`FrozenMlp`] (far cheaper than a candle call inside a
//! search).

use super::{Backend, Encoded, Outputs};
use crate::infer::InferError;
use crate::model::{FrozenMlp, NativeMlp, OutputActivation};

pub struct NativeMlpBackend {
    net: FrozenMlp,
}

impl NativeMlpBackend {
    pub fn new(net: &NativeMlp) -> Self {
        NativeMlpBackend {
            net: FrozenMlp::from(net),
        }
    }
}

impl Backend for NativeMlpBackend {
    fn run(&self, batch: &Encoded, _policy: bool) -> Result<Outputs, InferError> {
        let mut x = Vec::new();
        let values = (0..batch.rows)
            .map(|i| {
                batch.row_f32(i, &mut x);
                self.net.value(&x)
            })
            .collect();
        Ok(Outputs {
            values,
            policy: None,
        })
    }

    /// TD(lambda)'s networks have a linear output.
    fn output(&self) -> OutputActivation {
        OutputActivation::Identity
    }

    fn has_policy(&self) -> bool {
        false
    }

    /// A search does better pruning than valuing whole frontiers.
    fn prefers_batches(&self) -> bool {
        false
    }

    fn name(&self) -> String {
        "native-mlp".into()
    }
}
