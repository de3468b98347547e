//! The plain-Rust MDRNN: per-point outputs (the policy) and the value
//! read from them, one position at a time.

use super::{Backend, Encoded, Outputs};
use crate::infer::InferError;
use crate::model::{NativeMdrnn, OutputActivation};

pub struct NativeMdrnnBackend {
    net: NativeMdrnn,
}

impl NativeMdrnnBackend {
    pub fn new(net: NativeMdrnn) -> Self {
        NativeMdrnnBackend { net }
    }
}

impl Backend for NativeMdrnnBackend {
    fn run(&self, batch: &Encoded, policy: bool) -> Result<Outputs, InferError> {
        let [_, rows, columns] = batch.shape;
        let (mut x, mut scratch) = (Vec::new(), Vec::new());
        let mut values = Vec::with_capacity(batch.rows);
        let mut policies = Vec::with_capacity(if policy { batch.rows } else { 0 });
        for i in 0..batch.rows {
            batch.row_f32(i, &mut x);
            let mut points = Vec::new();
            self.net
                .point_outputs(&x, rows, columns, &mut points, &mut scratch);
            values.push(self.net.value_of(&points));
            if policy {
                policies.push(points);
            }
        }
        Ok(Outputs {
            values,
            policy: policy.then_some(policies),
        })
    }

    fn output(&self) -> OutputActivation {
        self.net.output()
    }

    fn has_policy(&self) -> bool {
        true
    }

    fn name(&self) -> String {
        "native-mdrnn".into()
    }
}
