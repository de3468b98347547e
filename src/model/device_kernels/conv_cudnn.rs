//! cuDNN's side of the convolution op ([`super::conv`]): forward, input
//! gradient and filter gradient on candle's own stream, NCHW as candle
//! keeps its tensors.
//!
//! - Descriptors and algorithms are chosen once per shape, dtype and math
//!   type, and kept per thread (a cuDNN handle is neither `Send` nor
//!   `Sync`, so handles are per thread and device, as candle keeps its
//!   own).
//! - The math type is the inference backend's decision
//!   ([`math_type`]): FMA for f32 (cuDNN would otherwise run f32 as TF32
//!   on tensor cores), tensor cores for TF32 (candle's reduced-precision
//!   f32 switch, which `--precision tf32` sets) and bf16, whose sums are
//!   f32.
//! - Algorithms are cuDNN's heuristic choice, replaced by a deterministic
//!   one where the choice is not, so a seeded run repeats on the GPU.
//! - One workspace per thread and device, grown to the largest need and
//!   reused: the work is ordered on one stream.

use super::conv::ConvDims;
use crate::util::Precision;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::{CudaDType, CudaDevice, DeviceId};
use candle_core::{CudaStorage, DType, Layout, Result, Shape};
use cudarc::cudnn::sys::{
    cudnnConvolutionBwdDataAlgo_t as DataAlgo, cudnnConvolutionBwdFilterAlgo_t as FilterAlgo,
    cudnnConvolutionFwdAlgo_t as FwdAlgo, cudnnConvolutionMode_t, cudnnMathType_t,
    cudnnTensorFormat_t,
};
use cudarc::cudnn::{
    ConvBackwardData, ConvBackwardFilter, ConvDescriptor, ConvForward, Cudnn, CudnnDataType,
    FilterDescriptor, TensorDescriptor,
};
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// cuDNN's math type for a precision: FMA only for f32 (cuDNN would
/// otherwise take TF32 on tensor cores), tensor cores for TF32 and bf16.
/// The one place this is decided, for training and inference alike.
pub(crate) fn math_type(precision: Precision) -> cudnnMathType_t {
    match precision {
        Precision::F32 => cudnnMathType_t::CUDNN_FMA_MATH,
        Precision::Tf32 | Precision::Bf16 => cudnnMathType_t::CUDNN_TENSOR_OP_MATH,
    }
}

/// Which of the three convolutions to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Pass {
    /// `(x, w) -> y`.
    Forward,
    /// `(dy, w) -> dx`.
    Data,
    /// `(x, dy) -> dw`.
    Filter,
}

/// A cuDNN error as a candle error naming what failed.
fn cudnn_error<E: std::fmt::Debug>(what: &'static str) -> impl Fn(E) -> candle_core::Error {
    move |e| candle_core::Error::Msg(format!("cuDNN {what}: {e:?}"))
}

/// What a cached plan is keyed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    device: DeviceId,
    dims: ConvDims,
    precision: Precision,
}

/// One shape's descriptors and each pass's algorithm (chosen when first
/// run) with its workspace size.
struct Plan<T> {
    conv: ConvDescriptor<f32>,
    x: TensorDescriptor<T>,
    w: FilterDescriptor<T>,
    y: TensorDescriptor<T>,
    forward: Option<(FwdAlgo, usize)>,
    data: Option<(DataAlgo, usize)>,
    filter: Option<(FilterAlgo, usize)>,
}

/// A dtype the op runs on cuDNN, with its per-thread plans.
trait Elem: CudnnDataType + CudaDType + DeviceRepr + ValidAsZeroBits + Copy + 'static {
    const ONE: Self;
    const ZERO: Self;
    fn with_plans<R>(f: impl FnOnce(&mut HashMap<Key, Rc<RefCell<Plan<Self>>>>) -> R) -> R;
}

thread_local! {
    static HANDLES: RefCell<HashMap<DeviceId, Arc<Cudnn>>> = RefCell::new(HashMap::new());
    static WORKSPACES: RefCell<HashMap<DeviceId, CudaSlice<u8>>> = RefCell::new(HashMap::new());
    static F32_PLANS: RefCell<HashMap<Key, Rc<RefCell<Plan<f32>>>>> = RefCell::new(HashMap::new());
    static BF16_PLANS: RefCell<HashMap<Key, Rc<RefCell<Plan<half::bf16>>>>> =
        RefCell::new(HashMap::new());
}

impl Elem for f32 {
    const ONE: Self = 1.0;
    const ZERO: Self = 0.0;
    fn with_plans<R>(f: impl FnOnce(&mut HashMap<Key, Rc<RefCell<Plan<Self>>>>) -> R) -> R {
        F32_PLANS.with(|p| f(&mut p.borrow_mut()))
    }
}

impl Elem for half::bf16 {
    const ONE: Self = half::bf16::ONE;
    const ZERO: Self = half::bf16::ZERO;
    fn with_plans<R>(f: impl FnOnce(&mut HashMap<Key, Rc<RefCell<Plan<Self>>>>) -> R) -> R {
        BF16_PLANS.with(|p| f(&mut p.borrow_mut()))
    }
}

/// The handle of this thread for `dev`, on candle's stream.
fn handle(dev: &CudaDevice) -> Result<Arc<Cudnn>> {
    HANDLES.with(|h| {
        if let Some(c) = h.borrow().get(&dev.id()) {
            return Ok(c.clone());
        }
        let c = Cudnn::new(dev.cuda_stream()).map_err(cudnn_error("handle"))?;
        h.borrow_mut().insert(dev.id(), c.clone());
        Ok(c)
    })
}

/// Runs `pass` on the two operands (in [`Pass`]'s order) and returns its
/// result as candle storage.
pub(crate) fn run(
    pass: Pass,
    dims: ConvDims,
    (s1, l1): (&CudaStorage, &Layout),
    (s2, l2): (&CudaStorage, &Layout),
) -> Result<(CudaStorage, Shape)> {
    if !l1.is_contiguous() || !l2.is_contiguous() {
        candle_core::bail!("conv2d on cuDNN: contiguous tensors only");
    }
    match s1.dtype() {
        DType::F32 => {
            let precision = if candle_core::cuda::gemm_reduced_precision_f32() {
                Precision::Tf32
            } else {
                Precision::F32
            };
            run_typed::<f32>(pass, dims, precision, (s1, l1), (s2, l2))
        }
        DType::BF16 => run_typed::<half::bf16>(pass, dims, Precision::Bf16, (s1, l1), (s2, l2)),
        other => candle_core::bail!("conv2d on cuDNN: f32 or bf16 only, got {other:?}"),
    }
}

fn run_typed<T: Elem>(
    pass: Pass,
    dims: ConvDims,
    precision: Precision,
    (s1, l1): (&CudaStorage, &Layout),
    (s2, l2): (&CudaStorage, &Layout),
) -> Result<(CudaStorage, Shape)> {
    let dev = s1.device().clone();
    let key = Key {
        device: dev.id(),
        dims,
        precision,
    };
    let plan = T::with_plans(|plans| -> Result<_> {
        if let Some(p) = plans.get(&key) {
            return Ok(p.clone());
        }
        let p = Rc::new(RefCell::new(Plan::<T>::new(
            &handle(&dev)?,
            dims,
            precision,
        )?));
        plans.insert(key, p.clone());
        Ok(p)
    })?;
    let mut plan = plan.borrow_mut();
    let a = s1.as_cuda_slice::<T>()?.slice(l1.start_offset()..);
    let b = s2.as_cuda_slice::<T>()?.slice(l2.start_offset()..);
    let out_dims = match pass {
        Pass::Forward => dims.y(),
        Pass::Data => dims.x,
        Pass::Filter => dims.w,
    };
    let len: usize = out_dims.iter().product();
    // SAFETY: every element is written: beta is zero.
    let mut out = unsafe { dev.alloc::<T>(len)? };
    let scale = (T::ONE, T::ZERO);
    match pass {
        Pass::Forward => {
            let (algo, bytes) = plan.forward()?;
            with_workspace(&dev, bytes, |ws| {
                // SAFETY: the descriptors were made from `dims` in T, and
                // `a`, `b`, `out` hold x, w and y in NCHW.
                unsafe { plan.forward_op().launch(algo, ws, scale, &a, &b, &mut out) }
                    .map_err(cudnn_error("forward convolution"))
            })?;
        }
        Pass::Data => {
            let (algo, bytes) = plan.data()?;
            with_workspace(&dev, bytes, |ws| {
                // SAFETY: as above; `a` is dy, `b` is w, `out` is dx.
                unsafe { plan.data_op().launch(algo, ws, scale, &mut out, &b, &a) }
                    .map_err(cudnn_error("input gradient"))
            })?;
        }
        Pass::Filter => {
            let (algo, bytes) = plan.filter()?;
            with_workspace(&dev, bytes, |ws| {
                // SAFETY: as above; `a` is x, `b` is dy, `out` is dw.
                unsafe { plan.filter_op().launch(algo, ws, scale, &a, &mut out, &b) }
                    .map_err(cudnn_error("filter gradient"))
            })?;
        }
    }
    Ok((
        CudaStorage::wrap_cuda_slice(out, dev),
        Shape::from(out_dims.to_vec()),
    ))
}

/// Runs `f` with this thread's workspace for `dev`, grown to `bytes`
/// (`None` when nothing is needed).
fn with_workspace(
    dev: &CudaDevice,
    bytes: usize,
    f: impl FnOnce(Option<&mut CudaSlice<u8>>) -> Result<()>,
) -> Result<()> {
    if bytes == 0 {
        return f(None);
    }
    WORKSPACES.with(|w| {
        let mut w = w.borrow_mut();
        let ws = match w.entry(dev.id()) {
            Entry::Occupied(slot) => {
                let ws = slot.into_mut();
                if ws.len() < bytes {
                    // The old one is freed in stream order, after the
                    // work that used it.
                    *ws = dev.alloc_zeros::<u8>(bytes)?;
                }
                ws
            }
            Entry::Vacant(slot) => slot.insert(dev.alloc_zeros::<u8>(bytes)?),
        };
        f(Some(ws))
    })
}

impl<T: Elem> Plan<T> {
    fn new(cudnn: &Arc<Cudnn>, dims: ConvDims, precision: Precision) -> Result<Self> {
        let int = |d: [usize; 4]| -> Result<[i32; 4]> {
            let mut out = [0i32; 4];
            for (o, v) in out.iter_mut().zip(d) {
                *o = i32::try_from(v).map_err(|_| {
                    candle_core::Error::Msg(format!("conv2d on cuDNN: dimension {v} too large"))
                })?;
            }
            Ok(out)
        };
        let nchw = cudnnTensorFormat_t::CUDNN_TENSOR_NCHW;
        let descs = cudnn_error("descriptors");
        let pad = dims.pad as i32;
        let mut conv = cudnn
            .create_conv2d::<f32>(
                [pad, pad],
                [1, 1],
                [1, 1],
                cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
            )
            .map_err(&descs)?;
        conv.set_math_type(math_type(precision)).map_err(&descs)?;
        Ok(Plan {
            x: cudnn
                .create_4d_tensor::<T>(nchw, int(dims.x)?)
                .map_err(&descs)?,
            w: cudnn
                .create_4d_filter::<T>(nchw, int(dims.w)?)
                .map_err(&descs)?,
            y: cudnn
                .create_4d_tensor::<T>(nchw, int(dims.y())?)
                .map_err(&descs)?,
            conv,
            forward: None,
            data: None,
            filter: None,
        })
    }

    fn forward_op(&self) -> ConvForward<'_, T, f32, T> {
        ConvForward {
            conv: &self.conv,
            x: &self.x,
            w: &self.w,
            y: &self.y,
        }
    }

    fn data_op(&self) -> ConvBackwardData<'_, T, f32, T> {
        ConvBackwardData {
            conv: &self.conv,
            dx: &self.x,
            w: &self.w,
            dy: &self.y,
        }
    }

    fn filter_op(&self) -> ConvBackwardFilter<'_, T, f32, T> {
        ConvBackwardFilter {
            conv: &self.conv,
            x: &self.x,
            dw: &self.w,
            dy: &self.y,
        }
    }

    /// Every forward algorithm is deterministic: cuDNN's pick.
    fn forward(&mut self) -> Result<(FwdAlgo, usize)> {
        if let Some(chosen) = self.forward {
            return Ok(chosen);
        }
        let op = self.forward_op();
        let picked = op.pick_algorithm().map_err(cudnn_error("algorithm"))?;
        let chosen = (
            picked,
            op.get_workspace_size(picked)
                .map_err(cudnn_error("workspace size"))?,
        );
        self.forward = Some(chosen);
        Ok(chosen)
    }

    fn data(&mut self) -> Result<(DataAlgo, usize)> {
        if let Some(chosen) = self.data {
            return Ok(chosen);
        }
        let op = self.data_op();
        let picked = op.pick_algorithm().map_err(cudnn_error("algorithm"))?;
        let chosen = first_supported(deterministic_data(picked), |a| op.get_workspace_size(a))?;
        self.data = Some(chosen);
        Ok(chosen)
    }

    fn filter(&mut self) -> Result<(FilterAlgo, usize)> {
        if let Some(chosen) = self.filter {
            return Ok(chosen);
        }
        let op = self.filter_op();
        let picked = op.pick_algorithm().map_err(cudnn_error("algorithm"))?;
        let chosen = first_supported(deterministic_filter(picked), |a| op.get_workspace_size(a))?;
        self.filter = Some(chosen);
        Ok(chosen)
    }
}

/// What this thread's plans chose, by shape; `None` before any ran.
pub(crate) fn choices() -> Option<super::conv::CudnnChoices> {
    fn of<T>(key: &Key, p: &Plan<T>) -> super::conv::ChosenConv {
        let name =
            |a: Option<String>| a.map(|s| s.trim_start_matches("CUDNN_CONVOLUTION_").to_string());
        super::conv::ChosenConv {
            x: key.dims.x,
            w: key.dims.w,
            pad: key.dims.pad,
            precision: key.precision.to_string(),
            forward: name(p.forward.map(|(a, _)| format!("{a:?}"))),
            data: name(p.data.map(|(a, _)| format!("{a:?}"))),
            filter: name(p.filter.map(|(a, _)| format!("{a:?}"))),
            workspace_bytes: [
                p.forward.map_or(0, |c| c.1),
                p.data.map_or(0, |c| c.1),
                p.filter.map_or(0, |c| c.1),
            ]
            .into_iter()
            .max()
            .unwrap_or(0),
        }
    }
    let mut convolutions: Vec<super::conv::ChosenConv> =
        f32::with_plans(|plans| plans.iter().map(|(k, p)| of(k, &p.borrow())).collect());
    convolutions.extend(half::bf16::with_plans(|plans| {
        plans
            .iter()
            .map(|(k, p)| of(k, &p.borrow()))
            .collect::<Vec<_>>()
    }));
    if convolutions.is_empty() {
        return None;
    }
    convolutions
        .sort_by(|a, b| (&a.precision, a.x, a.w, a.pad).cmp(&(&b.precision, b.x, b.w, b.pad)));
    Some(super::conv::CudnnChoices {
        version: cudarc::cudnn::result::get_version(),
        convolutions,
    })
}

/// The first candidate cuDNN supports for the shape (its workspace size
/// is the test), with that size.
fn first_supported<A: Copy + std::fmt::Debug, E: std::fmt::Debug>(
    candidates: Vec<A>,
    workspace: impl Fn(A) -> std::result::Result<usize, E>,
) -> Result<(A, usize)> {
    let mut last = None;
    for a in &candidates {
        match workspace(*a) {
            Ok(bytes) => return Ok((*a, bytes)),
            Err(e) => last = Some(format!("{a:?}: {e:?}")),
        }
    }
    candle_core::bail!(
        "cuDNN supports none of {candidates:?} here ({})",
        last.unwrap_or_default()
    )
}

/// The heuristic's input-gradient algorithm if deterministic (all but
/// `ALGO_0`, which sums with atomics), then the deterministic fallbacks.
fn deterministic_data(picked: DataAlgo) -> Vec<DataAlgo> {
    let mut out = Vec::new();
    if picked != DataAlgo::CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 {
        out.push(picked);
    }
    for a in [
        DataAlgo::CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
        DataAlgo::CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED,
    ] {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// The heuristic's filter-gradient algorithm if deterministic (all but
/// `ALGO_0` and `ALGO_3`), then the deterministic fallbacks.
fn deterministic_filter(picked: FilterAlgo) -> Vec<FilterAlgo> {
    let mut out = Vec::new();
    if !matches!(
        picked,
        FilterAlgo::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0
            | FilterAlgo::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3
    ) {
        out.push(picked);
    }
    for a in [
        FilterAlgo::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
        FilterAlgo::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED,
    ] {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_non_deterministic_choices_are_replaced() {
        let d = deterministic_data(DataAlgo::CUDNN_CONVOLUTION_BWD_DATA_ALGO_0);
        assert_eq!(d[0], DataAlgo::CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
        let d = deterministic_data(DataAlgo::CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING);
        assert_eq!(d[0], DataAlgo::CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING);
        for a in [
            FilterAlgo::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
            FilterAlgo::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3,
        ] {
            let f = deterministic_filter(a);
            assert!(!f.contains(&a));
            assert_eq!(f[0], FilterAlgo::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
        }
    }

    #[test]
    fn the_first_supported_candidate_is_taken() {
        let got = first_supported(
            vec![1, 2, 3],
            |a| if a < 2 { Err("no") } else { Ok(a * 10) },
        );
        assert_eq!(got.unwrap(), (2, 20));
        let none = first_supported(vec![1], |_| Err::<usize, _>("unsupported"));
        assert!(none.unwrap_err().to_string().contains("unsupported"));
    }
}
