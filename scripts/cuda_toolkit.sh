#!/usr/bin/env bash
# Sets up what `cargo build --features cuda` needs on a machine without a GPU
# or a system CUDA install, and writes the environment to source:
#
#   bash scripts/cuda_toolkit.sh            # once; prints the env file's path
#   source .venv-cuda/env.sh
#   cargo build --release --features cuda
#
# What it does:
# - PyPI's CUDA 13.0 toolkit (nvcc, cudart, cuBLAS, cuRAND, NVRTC, CCCL) into
#   .venv-cuda. 13.0 is pinned: cudarc 0.19 refuses newer nvcc versions, and
#   the driver 580 of the GPU machines JIT-compiles PTX only up to 13.0's.
# - Unversioned symlinks (libcublas.so, ...) that the linker looks for: the
#   wheels ship only versioned libraries.
# - A link-time stub libcuda.so.1 defining every driver symbol cudarc names,
#   and one of libcudnn.so.9 (cuDNN, for the native inference backend).
#   No wheel ships the driver library; the stub only lets the linker resolve
#   the names. It is never used at run time: on a GPU machine the driver's
#   own libcuda.so.1 is found first (the binary has no rpath), and the stub
#   directory must not be on LD_LIBRARY_PATH there.
# - CUDA_COMPUTE_CAP (default 90, Hopper: H100/H200) so candle's build does
#   not ask nvidia-smi, which a machine without a GPU lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${PLIES_CUDA_VENV:-$PWD/.venv-cuda}"
cap="${CUDA_COMPUTE_CAP:-90}"
if [ ! -x "$venv/bin/nvcc" ] && [ ! -x "$venv/lib/python3"*/site-packages/nvidia/cu13/bin/nvcc ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet \
    "cuda-toolkit[nvcc,cudart,cublas,curand,nvrtc,cccl,crt]==13.0.3.0"
fi
cuda_home="$(echo "$venv"/lib/python3*/site-packages/nvidia/cu13)"
[ -x "$cuda_home/bin/nvcc" ] || { echo "no nvcc under $cuda_home" >&2; exit 1; }

# Unversioned names for the linker, next to the versioned libraries.
for lib in cublas cublasLt curand nvrtc cudart; do
  versioned="$(ls "$cuda_home/lib/lib$lib.so."* 2>/dev/null | grep -v builtins | head -1)"
  [ -n "$versioned" ] || { echo "lib$lib.so.* missing in $cuda_home/lib" >&2; exit 1; }
  ln -sf "$(basename "$versioned")" "$cuda_home/lib/lib$lib.so"
done

# The link-time driver stub, from the symbol list of the cudarc in Cargo.lock.
stub="$venv/driver-stub"
if [ ! -f "$stub/libcuda.so.1" ]; then
  version="$(awk '/^name = "cudarc"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)"
  cargo fetch --locked >/dev/null 2>&1 || true
  sys="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-"$version"/src/driver/sys/mod.rs | head -1)"
  [ -f "$sys" ] || { echo "cudarc $version sources not found (cargo fetch)" >&2; exit 1; }
  mkdir -p "$stub"
  grep -o 'fn cu[A-Za-z0-9_]*(' "$sys" | sed 's/^fn //; s/($//' | sort -u \
    | awk '{ print "void " $1 "(void) {}" }' > "$stub/libcuda_stub.c"
  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stub/libcuda.so.1" "$stub/libcuda_stub.c"
  ln -sf libcuda.so.1 "$stub/libcuda.so"
fi
# The same for cuDNN (the native inference backend links it; on a GPU
# machine the real libcudnn.so.9 of PyPI's nvidia-cudnn wheel is found).
if [ ! -f "$stub/libcudnn.so.9" ]; then
  version="$(awk '/^name = "cudarc"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)"
  cargo fetch --locked >/dev/null 2>&1 || true
  sys="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-"$version"/src/cudnn/sys/mod.rs | head -1)"
  [ -f "$sys" ] || { echo "cudarc $version cuDNN sources not found (cargo fetch)" >&2; exit 1; }
  grep -o 'fn cudnn[A-Za-z0-9_]*(' "$sys" | sed 's/^fn //; s/($//' | sort -u \
    | awk '{ print "void " $1 "(void) {}" }' > "$stub/libcudnn_stub.c"
  gcc -shared -fPIC -Wl,-soname,libcudnn.so.9 -o "$stub/libcudnn.so.9" "$stub/libcudnn_stub.c"
  ln -sf libcudnn.so.9 "$stub/libcudnn.so"
fi

cat > "$venv/env.sh" <<EOF
# Source before \`cargo build --features cuda\` (written by scripts/cuda_toolkit.sh).
export CUDA_HOME="$cuda_home"
export CUDA_PATH="$cuda_home"
export PATH="$cuda_home/bin:\$PATH"
export CUDA_COMPUTE_CAP="$cap"
export LIBRARY_PATH="$cuda_home/lib:$stub\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
EOF
echo "$venv/env.sh"
