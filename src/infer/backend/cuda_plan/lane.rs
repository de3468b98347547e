//! One stream's share of the native backend: its own buffers, cuDNN and
//! cuBLAS handles, per-bucket descriptors and captured graphs. The
//! weights and kernels are shared by all lanes; two lanes let two batches
//! run at once (the batched service's two workers).

use super::raw::Raw;
use super::storage::{blas_compute, Storage};
use super::{device_error, OpWeights, Shared};
use crate::infer::backend::{Encoded, Outputs};
use crate::infer::plan::{Conv, Dense, NetPlan, Op, PlanAct, SlotPlan};
use crate::infer::InferError;
use cudarc::cublas::sys::{cublasOperation_t, cudaDataType};
use cudarc::cublas::{result as blas_result, CudaBlas};
use cudarc::cudnn::sys::{
    cudnnActivationMode_t, cudnnConvolutionFwdAlgo_t, cudnnConvolutionMode_t,
    cudnnNanPropagation_t, cudnnTensorFormat_t,
};
use cudarc::cudnn::{
    ActivationDescriptor, ConvBiasActivationForward, ConvDescriptor, ConvForward, Cudnn,
    FilterDescriptor, TensorDescriptor,
};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaGraph, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::ffi::c_void;
use std::sync::Arc;

/// Threads per block of the element-wise kernels.
const THREADS: u32 = 256;

/// A grid-stride launch over `n` elements.
fn grid(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(THREADS as usize).clamp(1, 65_535) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A [`PlanAct`] as `kernels/plan_ops.cu` reads it: (code, coefficient).
fn act_code(act: PlanAct) -> (i32, f32) {
    match act {
        PlanAct::Identity => (0, 0.0),
        PlanAct::Relu => (1, 0.0),
        PlanAct::Tanh => (2, 0.0),
        PlanAct::Sigmoid => (3, 0.0),
        PlanAct::Elliott(b) => (4, b),
    }
}

/// A convolution's descriptors that do not depend on the batch.
struct ConvDescs<T: Storage> {
    filter: FilterDescriptor<T>,
    conv: ConvDescriptor<f32>,
    bias: TensorDescriptor<T>,
    relu: ActivationDescriptor<f32>,
    /// Bias, skip and ReLU inside cuDNN's fused op; else a convolution
    /// then `plan_conv_epilogue`.
    fused: bool,
}

/// A convolution's descriptors and algorithm at one bucket size.
struct ConvIo<T: Storage> {
    x: TensorDescriptor<T>,
    y: TensorDescriptor<T>,
    algo: cudnnConvolutionFwdAlgo_t,
}

struct BucketRun<T: Storage> {
    rows: usize,
    /// By op index; `Some` for convolutions.
    convs: Vec<Option<ConvIo<T>>>,
    graph: Option<CudaGraph>,
}

pub(super) struct Lane<T: Storage> {
    shared: Arc<Shared<T>>,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    slot_plan: SlotPlan,
    /// Input planes and globals of the largest bucket.
    planes: CudaSlice<i8>,
    globals: CudaSlice<f32>,
    slots: Vec<CudaSlice<T>>,
    /// A dense layer's f32 product before its bias and activation.
    scratch: CudaSlice<f32>,
    workspace: CudaSlice<u8>,
    _blas_workspace: CudaSlice<u8>,
    convs: Vec<Option<ConvDescs<T>>>,
    buckets: Vec<BucketRun<T>>,
    host_planes: Vec<i8>,
    host_globals: Vec<f32>,
    /// Why graphs are not used, when they are not.
    pub graph_note: Option<String>,
}

// SAFETY: cuDNN and cuBLAS handles, descriptors and graphs may be used
// from any thread as long as no two threads use them at once; a lane is
// only ever used by the one thread that took it from the backend's pool.
unsafe impl<T: Storage> Send for Lane<T> {}

/// cuBLAS's workspace, set so graph capture never allocates.
const BLAS_WORKSPACE: usize = 32 << 20;

impl<T: Storage> Lane<T> {
    pub fn new(shared: Arc<Shared<T>>, fused: bool, graphs: bool) -> Result<Self, InferError> {
        let plan = shared.plan.clone();
        let stream = shared
            .ctx
            .new_stream()
            .map_err(device_error("new stream"))?;
        let cudnn = Cudnn::new(stream.clone()).map_err(device_error("cuDNN handle"))?;
        let blas = CudaBlas::new(stream.clone()).map_err(device_error("cuBLAS handle"))?;
        let largest = plan.buckets.largest();
        let slot_plan = plan.slots();
        let alloc_err = device_error("allocating the lane's buffers");
        let plane_len: usize = plan.planes.iter().product();
        let planes = stream
            .alloc_zeros::<i8>(plane_len * largest)
            .map_err(&alloc_err)?;
        let globals = stream
            .alloc_zeros::<f32>((plan.globals * largest).max(1))
            .map_err(&alloc_err)?;
        let slots = slot_plan
            .per_row
            .iter()
            .map(|&n| stream.alloc_zeros::<T>(n.max(1) * largest))
            .collect::<Result<Vec<_>, _>>()
            .map_err(&alloc_err)?;
        let widest_dense = plan
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Dense(d) => Some(d.outputs),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        let scratch = stream
            .alloc_zeros::<f32>(widest_dense * largest)
            .map_err(&alloc_err)?;
        let blas_workspace = stream
            .alloc_zeros::<u8>(BLAS_WORKSPACE)
            .map_err(&alloc_err)?;
        {
            let (ptr, _) = cudarc::driver::DevicePtr::device_ptr(&blas_workspace, &stream);
            // SAFETY: the workspace lives as long as the handle (both in the lane).
            unsafe {
                cudarc::cublas::sys::cublasSetWorkspace_v2(
                    *blas.handle(),
                    ptr as *mut c_void,
                    BLAS_WORKSPACE,
                )
            }
            .result()
            .map_err(device_error("cuBLAS workspace"))?;
        }

        let convs = plan
            .ops
            .iter()
            .map(|op| match op {
                Op::Conv(c) => conv_descs::<T>(&cudnn, c, &plan, fused).map(Some),
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let buckets = plan
            .buckets
            .sizes()
            .iter()
            .map(|&rows| {
                let convs = plan
                    .ops
                    .iter()
                    .zip(&convs)
                    .map(|(op, descs)| match (op, descs) {
                        (Op::Conv(c), Some(d)) => conv_io::<T>(&cudnn, c, d, rows).map(Some),
                        _ => Ok(None),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(BucketRun {
                    rows,
                    convs,
                    graph: None,
                })
            })
            .collect::<Result<Vec<_>, InferError>>()?;
        let workspace_bytes = buckets
            .iter()
            .flat_map(|b| b.convs.iter().zip(&convs))
            .filter_map(|(io, d)| Some((io.as_ref()?, d.as_ref()?)))
            .map(|(io, d)| {
                ConvForward {
                    conv: &d.conv,
                    x: &io.x,
                    w: &d.filter,
                    y: &io.y,
                }
                .get_workspace_size(io.algo)
                .map_err(device_error("cuDNN workspace size"))
            })
            .try_fold(0usize, |m, s| s.map(|s| m.max(s)))?;
        let workspace = stream
            .alloc_zeros::<u8>(workspace_bytes.max(1))
            .map_err(&alloc_err)?;
        let mut lane = Lane {
            host_planes: vec![0; plane_len * largest],
            host_globals: vec![0.0; (plan.globals * largest).max(1)],
            shared,
            stream,
            blas,
            slot_plan,
            planes,
            globals,
            slots,
            scratch,
            workspace,
            _blas_workspace: blas_workspace,
            convs,
            buckets,
            graph_note: (!graphs).then(|| "graphs off".to_string()),
        };
        // Every bucket once eagerly (cuDNN and cuBLAS set themselves up on
        // first use, which a capture must not see), then captured.
        for b in 0..lane.buckets.len() {
            lane.enqueue(b)?;
        }
        lane.stream
            .synchronize()
            .map_err(device_error("first run of every bucket"))?;
        if graphs {
            if let Err(e) = lane.capture_all() {
                lane.buckets.iter_mut().for_each(|b| b.graph = None);
                lane.graph_note = Some(format!("eager: {e}"));
            }
        }
        Ok(lane)
    }

    fn capture_all(&mut self) -> Result<(), InferError> {
        for b in 0..self.buckets.len() {
            self.stream
                .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                .map_err(device_error("begin graph capture"))?;
            let enqueued = self.enqueue(b);
            let graph = self
                .stream
                .end_capture(CUgraphInstantiate_flags(0))
                .map_err(device_error("end graph capture"));
            enqueued?;
            let graph = graph?.ok_or_else(|| {
                InferError::Device(format!(
                    "capturing bucket {}: empty graph",
                    self.buckets[b].rows
                ))
            })?;
            graph.upload().map_err(device_error("graph upload"))?;
            self.buckets[b].graph = Some(graph);
        }
        Ok(())
    }

    /// Rows `start..start + rows` of `batch` (at most the largest bucket),
    /// padded to their bucket: the values, and the policy logits when the
    /// plan has a policy head and `policy` asks for them (else they are
    /// not copied back).
    pub fn run(
        &mut self,
        batch: &Encoded,
        start: usize,
        rows: usize,
        policy: bool,
    ) -> Result<Outputs, InferError> {
        let plan = self.shared.plan.clone();
        let bucket = plan.buckets.for_rows(rows);
        let b = plan
            .buckets
            .sizes()
            .iter()
            .position(|&s| s == bucket)
            .ok_or_else(|| InferError::Device(format!("no bucket of {bucket} rows")))?;
        let (pl, gl) = (batch.plane_len(), batch.globals_len);
        // Padding rows are zero, so a graph never depends on `rows`.
        self.host_planes[..rows * pl]
            .copy_from_slice(&batch.planes[start * pl..(start + rows) * pl]);
        self.host_planes[rows * pl..bucket * pl].fill(0);
        let copy = device_error("copying the batch to the device");
        self.stream
            .memcpy_htod(
                &self.host_planes[..bucket * pl],
                &mut self.planes.slice_mut(..bucket * pl),
            )
            .map_err(&copy)?;
        if gl > 0 {
            self.host_globals[..rows * gl]
                .copy_from_slice(&batch.globals[start * gl..(start + rows) * gl]);
            self.host_globals[rows * gl..bucket * gl].fill(0.0);
            self.stream
                .memcpy_htod(
                    &self.host_globals[..bucket * gl],
                    &mut self.globals.slice_mut(..bucket * gl),
                )
                .map_err(&copy)?;
        }
        match &self.buckets[b].graph {
            Some(graph) => graph.launch().map_err(device_error("graph launch"))?,
            None => self.enqueue(b)?,
        }
        let read = |buf: crate::infer::plan::BufId| -> Result<Vec<f32>, InferError> {
            let per = plan.per_row[buf.0];
            let slot = &self.slots[self.slot_plan.slot(buf)];
            let host: Vec<T> = self
                .stream
                .clone_dtoh(&slot.slice(..rows * per))
                .map_err(device_error("copying outputs from the device"))?;
            Ok(host.into_iter().map(T::to_f32).collect())
        };
        let values = read(plan.value)?;
        let policy = match plan.policy.filter(|_| policy) {
            Some(p) => {
                let per = plan.per_row[p.0];
                Some(read(p)?.chunks_exact(per).map(<[f32]>::to_vec).collect())
            }
            None => None,
        };
        Ok(Outputs { values, policy })
    }

    /// Every op of bucket `b` onto the lane's stream.
    fn enqueue(&self, b: usize) -> Result<(), InferError> {
        let plan = self.shared.plan.clone();
        for (i, op) in plan.ops.iter().enumerate() {
            match op {
                Op::Widen { dst } => {
                    let rows = self.buckets[b].rows as i64;
                    let [c, h, w] = plan.planes;
                    let (c, hw) = (c as i32, (h * w) as i32);
                    let src = Raw::of(&self.planes, &self.stream);
                    let dst = self.raw_slot(*dst);
                    let n = rows as usize * plan.per_row[op.writes().0];
                    let k = &self.shared.kernels;
                    let mut launch = self.stream.launch_builder(&k.widen);
                    let (src, dst) = (src.at(0), dst.at(0));
                    launch.arg(&src).arg(&dst).arg(&rows).arg(&c).arg(&hw);
                    // SAFETY: the arguments are the kernel's, in order; the
                    // buffers hold `rows` positions of these sizes.
                    unsafe { launch.launch(grid(n)) }.map_err(device_error("widen kernel"))?;
                }
                Op::Globals { dst } => {
                    let n = (self.buckets[b].rows * plan.globals) as i64;
                    let src = Raw::of(&self.globals, &self.stream);
                    let dst = self.raw_slot(*dst);
                    let k = &self.shared.kernels;
                    let mut launch = self.stream.launch_builder(&k.globals);
                    let (src, dst) = (src.at(0), dst.at(0));
                    launch.arg(&src).arg(&dst).arg(&n);
                    // SAFETY: as for widen.
                    unsafe { launch.launch(grid(n as usize)) }
                        .map_err(device_error("globals kernel"))?;
                }
                Op::Conv(c) => self.enqueue_conv(i, c, b)?,
                Op::Dense(d) => self.enqueue_dense(i, d, b)?,
            }
        }
        Ok(())
    }

    fn raw_slot(&self, buf: crate::infer::plan::BufId) -> Raw<T> {
        Raw::of(&self.slots[self.slot_plan.slot(buf)], &self.stream)
    }

    fn enqueue_conv(&self, i: usize, c: &Conv, b: usize) -> Result<(), InferError> {
        let (
            Some(descs),
            Some(io),
            OpWeights::Conv {
                weight,
                bias,
                bias_f32,
            },
        ) = (
            &self.convs[i],
            &self.buckets[b].convs[i],
            &self.shared.weights[i],
        )
        else {
            return Err(InferError::Device(format!("op {i}: no convolution set up")));
        };
        let rows = self.buckets[b].rows;
        let x = self.raw_slot(c.src);
        let mut y = self.raw_slot(c.dst);
        let w = Raw::of(weight, &self.stream);
        let mut ws = Raw::of(&self.workspace, &self.stream);
        let what = device_error("cuDNN convolution");
        if descs.fused {
            // y = relu(conv(x) + bias + skip); with no skip, z is y at weight 0.
            let (z, alpha2) = match c.skip {
                Some(s) => (self.raw_slot(s), 1.0f32),
                None => (self.raw_slot(c.dst), 0.0f32),
            };
            let bias = Raw::of(bias, &self.stream);
            let op = ConvBiasActivationForward {
                conv: &descs.conv,
                act: &descs.relu,
                x: &io.x,
                w: &descs.filter,
                z: &io.y,
                bias: &descs.bias,
                y: &io.y,
            };
            // SAFETY: the descriptors were made for these buffers' types,
            // layouts and this bucket's rows.
            unsafe {
                op.launch(
                    io.algo,
                    Some(&mut ws),
                    (T::from_f32(1.0), T::from_f32(alpha2)),
                    &x,
                    &w,
                    &z,
                    &bias,
                    &mut y,
                )
            }
            .map_err(what)?;
            return Ok(());
        }
        let op = ConvForward {
            conv: &descs.conv,
            x: &io.x,
            w: &descs.filter,
            y: &io.y,
        };
        // SAFETY: as above.
        unsafe {
            op.launch(
                io.algo,
                Some(&mut ws),
                (T::from_f32(1.0), T::from_f32(0.0)),
                &x,
                &w,
                &mut y,
            )
        }
        .map_err(what)?;
        let n = (rows * c.out_hw[0] * c.out_hw[1] * c.out_channels) as i64;
        let skip = c.skip.map_or(0, |s| self.raw_slot(s).at(0));
        let bias = Raw::of(bias_f32, &self.stream);
        let (act, coef) = act_code(c.act);
        let channels = c.out_channels as i32;
        let k = &self.shared.kernels;
        let (y, bias) = (y.at(0), bias.at(0));
        let mut launch = self.stream.launch_builder(&k.conv_epilogue);
        launch
            .arg(&y)
            .arg(&bias)
            .arg(&skip)
            .arg(&n)
            .arg(&channels)
            .arg(&act)
            .arg(&coef);
        // SAFETY: the kernel's arguments in order; a zero skip is none.
        unsafe { launch.launch(grid(n as usize)) }.map_err(device_error("convolution epilogue"))?;
        Ok(())
    }

    fn enqueue_dense(&self, i: usize, d: &Dense, b: usize) -> Result<(), InferError> {
        let OpWeights::Dense { weight, bias_f32 } = &self.shared.weights[i] else {
            return Err(InferError::Device(format!("op {i}: no dense layer set up")));
        };
        let plan = self.shared.plan.clone();
        let rows = self.buckets[b].rows;
        let w = Raw::of(weight, &self.stream);
        let y = Raw::of(&self.scratch, &self.stream);
        let compute = blas_compute(self.shared.precision);
        let mut column = 0;
        // Row-major y[rows][out] = x[rows][in] W^T, one product per source
        // over its block of W's columns, added up in y.
        for (k, &src) in d.srcs.iter().enumerate() {
            let per = plan.per_row[src.0];
            let x = self.raw_slot(src);
            let (alpha, beta) = (1.0f32, if k == 0 { 0.0f32 } else { 1.0 });
            // SAFETY: column-major view of the row-major buffers: W is
            // [in][out] with leading dimension `inputs`, offset to the
            // source's columns; x is [per][rows]; y is [out][rows].
            unsafe {
                blas_result::gemm_ex(
                    *self.blas.handle(),
                    cublasOperation_t::CUBLAS_OP_T,
                    cublasOperation_t::CUBLAS_OP_N,
                    d.outputs as i32,
                    rows as i32,
                    per as i32,
                    (&alpha as *const f32).cast::<c_void>(),
                    w.at(column) as *const c_void,
                    T::BLAS_TYPE,
                    d.inputs as i32,
                    x.at(0) as *const c_void,
                    T::BLAS_TYPE,
                    per as i32,
                    (&beta as *const f32).cast::<c_void>(),
                    y.at(0) as *mut c_void,
                    cudaDataType::CUDA_R_32F,
                    d.outputs as i32,
                    compute,
                    cudarc::cublas::sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
            .map_err(device_error("cuBLAS product"))?;
            column += per;
        }
        let n = (rows * d.outputs) as i64;
        let dst = self.raw_slot(d.dst);
        let bias = Raw::of(bias_f32, &self.stream);
        let (act, coef) = act_code(d.act);
        let width = d.outputs as i32;
        let k = &self.shared.kernels;
        let (y, bias, dst) = (y.at(0), bias.at(0), dst.at(0));
        let mut launch = self.stream.launch_builder(&k.bias_act);
        launch
            .arg(&y)
            .arg(&bias)
            .arg(&dst)
            .arg(&n)
            .arg(&width)
            .arg(&act)
            .arg(&coef);
        // SAFETY: the kernel's arguments in order.
        unsafe { launch.launch(grid(n as usize)) }.map_err(device_error("dense bias kernel"))?;
        Ok(())
    }
}

/// The batch-independent descriptors of `c`.
fn conv_descs<T: Storage>(
    cudnn: &Arc<Cudnn>,
    c: &Conv,
    plan: &NetPlan,
    fused: bool,
) -> Result<ConvDescs<T>, InferError> {
    let what = device_error("cuDNN convolution descriptors");
    let nhwc = cudnnTensorFormat_t::CUDNN_TENSOR_NHWC;
    let filter = cudnn
        .create_4d_filter::<T>(
            nhwc,
            [
                c.out_channels as i32,
                c.in_channels as i32,
                c.kernel[0] as i32,
                c.kernel[1] as i32,
            ],
        )
        .map_err(&what)?;
    let mut conv = cudnn
        .create_conv2d::<f32>(
            [c.pad[0] as i32, c.pad[1] as i32],
            [1, 1],
            [1, 1],
            cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
        )
        .map_err(&what)?;
    conv.set_math_type(crate::model::device_kernels::conv_cudnn::math_type(
        plan.precision,
    ))
    .map_err(&what)?;
    let bias = cudnn
        .create_4d_tensor::<T>(nhwc, [1, c.out_channels as i32, 1, 1])
        .map_err(&what)?;
    let relu = cudnn
        .create_activation::<f32>(
            cudnnActivationMode_t::CUDNN_ACTIVATION_RELU,
            cudnnNanPropagation_t::CUDNN_PROPAGATE_NAN,
            0.0,
        )
        .map_err(&what)?;
    Ok(ConvDescs {
        filter,
        conv,
        bias,
        relu,
        fused: fused && c.act == PlanAct::Relu,
    })
}

/// `c`'s input and output descriptors at `rows` positions, and the
/// algorithm cuDNN's heuristics pick for them.
fn conv_io<T: Storage>(
    cudnn: &Arc<Cudnn>,
    c: &Conv,
    d: &ConvDescs<T>,
    rows: usize,
) -> Result<ConvIo<T>, InferError> {
    // `rows` maps of `channels` x `[h, w]`, channels last.
    let nhwc = |channels: usize, [h, w]: [usize; 2]| {
        cudnn
            .create_4d_tensor::<T>(
                cudnnTensorFormat_t::CUDNN_TENSOR_NHWC,
                [rows as i32, channels as i32, h as i32, w as i32],
            )
            .map_err(device_error("cuDNN tensor descriptors"))
    };
    let x = nhwc(c.in_channels, c.in_hw)?;
    let y = nhwc(c.out_channels, c.out_hw)?;
    let algo = ConvForward {
        conv: &d.conv,
        x: &x,
        w: &d.filter,
        y: &y,
    }
    .pick_algorithm()
    .map_err(device_error("cuDNN algorithm choice"))?;
    Ok(ConvIo { x, y, algo })
}
