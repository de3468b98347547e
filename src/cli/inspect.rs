//! `plies inspect CKPT [--plot FILE]`: a linear checkpoint's piece-square
//! tables, printed and drawn as one heatmap per piece type, and its
//! weights on the encoder's globals by name.

use anyhow::Context;
use clap::Args;
use plies::checkpoint::CheckpointSource;
use plies::eval::psq_tables;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct InspectArgs {
    /// A `linear` model's checkpoint: a directory, `ckpt:PATH` or
    /// `ckpt:hf:ORG/NAME[@REV]`.
    checkpoint: String,
    /// Also draw the tables, one 8x8 heatmap per piece type: a .png or
    /// .svg file (both when the name has neither extension).
    #[arg(long)]
    plot: Option<PathBuf>,
}

pub fn run(a: InspectArgs) -> anyhow::Result<ExitCode> {
    let source = CheckpointSource::parse(&a.checkpoint)?;
    let ckpt = source
        .open(None, None)
        .with_context(|| format!("loading checkpoint {source}"))?;
    let tables = psq_tables(&ckpt)?;
    print!("{}", tables.text());
    if let Some(path) = &a.plot {
        if tables.planes.is_empty() {
            anyhow::bail!(
                "--plot {}: {} has no board term (\"board\": false), so no tables to draw",
                path.display(),
                a.checkpoint
            );
        }
        let maps = tables.heatmaps();
        match path.extension().and_then(|e| e.to_str()) {
            Some("png") => maps.write_png(path)?,
            Some("svg") => maps.write_svg(path)?,
            _ => {
                maps.write_png(path.with_extension("png"))?;
                maps.write_svg(path.with_extension("svg"))?;
            }
        }
        println!("\nwrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
