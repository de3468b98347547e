//! A view of device memory by its address, for cuDNN and cuBLAS calls.
//!
//! The backend owns every buffer as a `CudaSlice` for its whole life and
//! orders all work on one stream per lane, so it needs none of cudarc's
//! per-slice event tracking (which would also put event nodes into a
//! captured graph). A `Raw` names the memory without borrowing its owner:
//! a fused convolution can read its output as its (zero-weighted) skip
//! input, as cuDNN allows.

use cudarc::driver::{
    sys::CUdeviceptr, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop,
};
use std::marker::PhantomData;
use std::sync::Arc;

pub(super) struct Raw<T> {
    ptr: CUdeviceptr,
    len: usize,
    stream: Arc<CudaStream>,
    marker: PhantomData<T>,
}

impl<T> Raw<T> {
    /// All of `slice`, used on `stream`.
    pub fn of(slice: &CudaSlice<T>, stream: &Arc<CudaStream>) -> Self {
        let (ptr, _no_event) = slice.device_ptr(stream);
        Raw {
            ptr,
            len: slice.len(),
            stream: stream.clone(),
            marker: PhantomData,
        }
    }

    /// The address of element `at`.
    pub fn at(&self, at: usize) -> CUdeviceptr {
        debug_assert!(at <= self.len);
        self.ptr + (at * std::mem::size_of::<T>()) as CUdeviceptr
    }
}

impl<T> DeviceSlice<T> for Raw<T> {
    fn len(&self) -> usize {
        self.len
    }

    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for Raw<T> {
    fn device_ptr<'a>(&'a self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        (self.ptr, SyncOnDrop::Record(None))
    }
}

impl<T> DevicePtrMut<T> for Raw<T> {
    fn device_ptr_mut<'a>(&'a mut self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        (self.ptr, SyncOnDrop::Record(None))
    }
}
