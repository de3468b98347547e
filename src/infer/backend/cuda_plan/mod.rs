//! The native CUDA backend: an inference plan ([`crate::infer::plan`])
//! executed with cuDNN and cuBLAS, one CUDA graph per batch bucket.
//!
//! - Convolutions run in NHWC through cuDNN; a convolution with ReLU takes
//!   its bias and residual input in cuDNN's fused
//!   `ConvolutionBiasActivationForward`, others run a convolution then
//!   `plan_conv_epilogue` (`kernels/plan_ops.cu`).
//! - Dense layers are one cuBLAS product per source into f32, then
//!   `plan_bias_act`.
//! - Values are stored as f32 (precisions f32 and TF32) or bf16; products
//!   accumulate in f32. f32 turns TF32 off in both libraries.
//! - Each lane (stream, buffers, handles, graphs) serves one batch at a
//!   time; two lanes let the batched service's two workers overlap.
//!
//! The plan's CPU twin ([`crate::infer::plan::PlanTwin`]) computes the same
//! values op by op; `tests/device.rs` compares the two on a GPU.

mod lane;
mod raw;
mod storage;

use super::{Backend, Encoded, Outputs};
use crate::infer::plan::{NetPlan, Op, Precision};
use crate::infer::InferError;
use crate::model::OutputActivation;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice};
use lane::Lane;
use std::sync::{Arc, Condvar, Mutex};
use storage::Storage;

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/plan_ops.ptx"));

/// How the native backend runs; [`Default`] is the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaPlanOptions {
    /// Batches served at once, each on its own stream (1..=8).
    pub lanes: usize,
    /// Replay one captured CUDA graph per bucket instead of launching op
    /// by op.
    pub graphs: bool,
    /// Use cuDNN's fused convolution + bias + skip + ReLU.
    pub fused: bool,
}

impl Default for CudaPlanOptions {
    fn default() -> Self {
        CudaPlanOptions {
            lanes: 2,
            graphs: true,
            fused: true,
        }
    }
}

impl CudaPlanOptions {
    /// The defaults, with `PLIES_CUDA_GRAPHS=0` or `PLIES_CUDA_FUSED=0`
    /// turning graphs or the fused convolution off (to measure what each
    /// brings, or to set aside a driver that mishandles one).
    pub fn from_env() -> Self {
        let off = |name: &str| std::env::var(name).is_ok_and(|v| v == "0");
        CudaPlanOptions {
            graphs: !off("PLIES_CUDA_GRAPHS"),
            fused: !off("PLIES_CUDA_FUSED"),
            ..Self::default()
        }
    }
}

/// A device error as an [`InferError`] naming the step that failed.
fn device_error<E: std::fmt::Debug>(what: &'static str) -> impl Fn(E) -> InferError {
    move |e| InferError::Device(format!("{what}: {e:?}"))
}

/// The element-wise kernels of one storage type.
struct Kernels {
    widen: CudaFunction,
    globals: CudaFunction,
    bias_act: CudaFunction,
    conv_epilogue: CudaFunction,
}

impl Kernels {
    /// The element-wise kernels for storage `T`.
    fn load<T: Storage>(ctx: &Arc<cudarc::driver::CudaContext>) -> Result<Self, InferError> {
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(PTX))
            .map_err(device_error("loading kernels/plan_ops.cu"))?;
        let f = |name: &str| {
            module
                .load_function(&format!("plan_{name}_{}", T::KERNEL_SUFFIX))
                .map_err(device_error("loading a kernel of kernels/plan_ops.cu"))
        };
        Ok(Kernels {
            widen: f("widen")?,
            globals: f("globals")?,
            bias_act: f("bias_act")?,
            conv_epilogue: f("conv_epilogue")?,
        })
    }
}

/// An op's weights on the device, by op index.
enum OpWeights<T> {
    None,
    Conv {
        /// `[out][kh][kw][in]`.
        weight: CudaSlice<T>,
        /// For the fused op (cuDNN wants the output's type).
        bias: CudaSlice<T>,
        /// For the epilogue kernel.
        bias_f32: CudaSlice<f32>,
    },
    Dense {
        /// `[outputs][inputs]`.
        weight: CudaSlice<T>,
        bias_f32: CudaSlice<f32>,
    },
}

/// What every lane reads: the plan, its weights, the kernels.
struct Shared<T> {
    ctx: Arc<CudaContext>,
    plan: Arc<NetPlan>,
    precision: Precision,
    weights: Vec<OpWeights<T>>,
    kernels: Kernels,
}

/// A plan on CUDA device `ordinal`, in the plan's precision.
pub fn cuda_plan_backend(
    plan: NetPlan,
    ordinal: usize,
    options: CudaPlanOptions,
) -> Result<Box<dyn Backend>, InferError> {
    match plan.precision {
        Precision::F32 | Precision::Tf32 => Ok(Box::new(CudaPlanBackend::<f32>::new(
            plan, ordinal, options,
        )?)),
        Precision::Bf16 => Ok(Box::new(CudaPlanBackend::<half::bf16>::new(
            plan, ordinal, options,
        )?)),
    }
}

struct CudaPlanBackend<T: Storage> {
    shared: Arc<Shared<T>>,
    idle: Mutex<Vec<Lane<T>>>,
    freed: Condvar,
    name: String,
}

impl<T: Storage> CudaPlanBackend<T> {
    fn new(plan: NetPlan, ordinal: usize, options: CudaPlanOptions) -> Result<Self, InferError> {
        let ctx = CudaContext::new(ordinal).map_err(device_error("opening the CUDA device"))?;
        // SAFETY: this context object is the backend's own (candle holds
        // another); all its work is ordered on one stream per lane.
        unsafe { ctx.disable_event_tracking() };
        let upload = ctx.default_stream();
        let to_device = |values: &[f32]| {
            let host: Vec<T> = values.iter().map(|&v| T::from_f32(v)).collect();
            upload
                .clone_htod(&host)
                .map_err(device_error("copying weights to the device"))
        };
        let to_device_f32 = |values: &[f32]| {
            upload
                .clone_htod(values)
                .map_err(device_error("copying weights to the device"))
        };
        let weights = plan
            .ops
            .iter()
            .map(|op| {
                Ok(match op {
                    Op::Conv(c) => OpWeights::Conv {
                        weight: to_device(&c.weight)?,
                        bias: to_device(&c.bias)?,
                        bias_f32: to_device_f32(&c.bias)?,
                    },
                    Op::Dense(d) => OpWeights::Dense {
                        weight: to_device(&d.weight)?,
                        bias_f32: to_device_f32(&d.bias)?,
                    },
                    Op::Widen { .. } | Op::Globals { .. } => OpWeights::None,
                })
            })
            .collect::<Result<Vec<_>, InferError>>()?;
        upload
            .synchronize()
            .map_err(device_error("copying weights to the device"))?;
        let kernels = Kernels::load::<T>(&ctx)?;
        let precision = plan.precision;
        let shared = Arc::new(Shared {
            ctx,
            plan: Arc::new(plan),
            precision,
            weights,
            kernels,
        });
        let lanes = options.lanes.clamp(1, 8);
        let mut fused = options.fused;
        let mut idle = Vec::with_capacity(lanes);
        while idle.len() < lanes {
            match Lane::new(shared.clone(), fused, options.graphs) {
                Ok(lane) => idle.push(lane),
                // A cuDNN without the fused op for these types: the
                // convolution and the epilogue kernel do the same.
                Err(e) if fused && idle.is_empty() => {
                    tracing::warn!(
                        "cuDNN's fused convolution is unavailable ({e}); running unfused"
                    );
                    fused = false;
                }
                Err(e) => return Err(e),
            }
        }
        let mut name = format!("cuda-native-{precision}");
        if !fused {
            name.push_str("-unfused");
        }
        if let Some(note) = idle.first().and_then(|l| l.graph_note.clone()) {
            tracing::warn!("{name}: no CUDA graphs ({note})");
            name.push_str("-eager");
        }
        Ok(CudaPlanBackend {
            shared,
            idle: Mutex::new(idle),
            freed: Condvar::new(),
            name,
        })
    }

    /// A free lane, waiting for one if all are busy.
    fn take_lane(&self) -> Lane<T> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(lane) = idle.pop() {
                return lane;
            }
            idle = self.freed.wait(idle).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn give_back(&self, lane: Lane<T>) {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(lane);
        self.freed.notify_one();
    }
}

impl<T: Storage> Backend for CudaPlanBackend<T> {
    fn run(&self, batch: &Encoded, policy: bool) -> Result<Outputs, InferError> {
        let plan = &self.shared.plan;
        if batch.shape != plan.planes || batch.globals_len != plan.globals {
            return Err(InferError::Plan(format!(
                "{} plan reads planes {:?} and {} globals, the batch has {:?} and {}",
                plan.model, plan.planes, plan.globals, batch.shape, batch.globals_len
            )));
        }
        let mut values = Vec::with_capacity(batch.rows);
        let mut logits = (policy && plan.policy.is_some()).then(|| Vec::with_capacity(batch.rows));
        let mut lane = self.take_lane();
        let largest = plan.buckets.largest();
        let mut start = 0;
        let mut outcome = Ok(());
        while start < batch.rows {
            let rows = (batch.rows - start).min(largest);
            match lane.run(batch, start, rows, logits.is_some()) {
                Ok(Outputs {
                    values: v,
                    policy: p,
                }) => {
                    values.extend(v);
                    if let (Some(out), Some(p)) = (logits.as_mut(), p) {
                        out.extend(p);
                    }
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
            start += rows;
        }
        self.give_back(lane);
        outcome?;
        Ok(Outputs {
            values,
            policy: logits,
        })
    }

    fn output(&self) -> OutputActivation {
        self.shared.plan.output
    }

    fn has_policy(&self) -> bool {
        self.shared.plan.policy.is_some()
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
