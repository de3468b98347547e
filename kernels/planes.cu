// int8 encoded planes (sent to the device as bytes) widened to f32.
// Twin: src/util/int8_planes.rs::widen_host (used by the loader for GPU batches).
extern "C" __global__ void planes_i8_to_f32(const signed char *in, float *out,
                                            unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    out[i] = (float)in[i];
  }
}
