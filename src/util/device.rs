//! `--device` names: `cpu`, `cuda`, `cuda:N`, `metal`.

use candle_core::Device;

/// A device name that does not parse, or a device this binary cannot use.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("--device {0}: expected cpu, cuda, cuda:N or metal")]
    Unknown(String),
    #[error(
        "--device {0}: this plies binary was built without {1} support; rebuild it with \
         `cargo build --release --features {2}`, or use --device cpu"
    )]
    NotBuilt(String, &'static str, &'static str),
    #[error("--device {0}: {1}")]
    Open(String, candle_core::Error),
}

/// Opens the device a `--device` value names. CUDA and Metal need the
/// `cuda` / `metal` cargo features; without them the error says how to
/// rebuild instead of failing inside candle.
pub fn parse_device(name: &str) -> Result<Device, DeviceError> {
    let cuda = |n: usize| {
        if !candle_core::utils::cuda_is_available() {
            return Err(DeviceError::NotBuilt(name.into(), "CUDA", "cuda"));
        }
        Device::new_cuda(n).map_err(|e| DeviceError::Open(name.into(), e))
    };
    match name {
        "cpu" => Ok(Device::Cpu),
        "cuda" => cuda(0),
        "metal" => {
            if !candle_core::utils::metal_is_available() {
                return Err(DeviceError::NotBuilt(name.into(), "Metal", "metal"));
            }
            Device::new_metal(0).map_err(|e| DeviceError::Open(name.into(), e))
        }
        _ => match name.strip_prefix("cuda:").map(str::parse::<usize>) {
            Some(Ok(n)) => cuda(n),
            _ => Err(DeviceError::Unknown(name.into())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_missing_backends_say_how_to_rebuild() {
        assert!(parse_device("cpu").unwrap().is_cpu());
        let err = parse_device("gpu").unwrap_err().to_string();
        assert!(err.contains("expected cpu, cuda, cuda:N or metal"), "{err}");
        let err = parse_device("cuda:x").unwrap_err().to_string();
        assert!(err.contains("cuda:x"), "{err}");
        if !candle_core::utils::cuda_is_available() {
            let err = parse_device("cuda:1").unwrap_err().to_string();
            assert!(err.contains("--features cuda"), "{err}");
        }
        if !candle_core::utils::metal_is_available() {
            let err = parse_device("metal").unwrap_err().to_string();
            assert!(err.contains("--features metal"), "{err}");
        }
    }
}
