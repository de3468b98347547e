//! `plies hub download|upload`: checkpoints (model repositories) and
//! datasets (`--repo-type dataset`) to and from a Hugging Face-style hub.

use clap::{Args, Subcommand, ValueEnum};
use plies::checkpoint::ShareReport;
use plies::hub::{RepoKind, RepoRef};
use plies::report::Table;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum HubCmd {
    /// Download a repository into the shared cache (HF_HUB_CACHE, else
    /// $HF_HOME/hub), check it (a checkpoint as plies loads it, a dataset
    /// against its manifest's sha256) and optionally copy it to --out.
    Download(DownloadArgs),
    /// Check a checkpoint or dataset directory and commit it to a
    /// repository on the hub (HF_ENDPOINT, HF_TOKEN), creating it if needed.
    Upload(UploadArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum RepoTypeArg {
    Model,
    Dataset,
}

impl From<RepoTypeArg> for RepoKind {
    fn from(t: RepoTypeArg) -> Self {
        match t {
            RepoTypeArg::Model => RepoKind::Model,
            RepoTypeArg::Dataset => RepoKind::Dataset,
        }
    }
}

#[derive(Args)]
pub struct DownloadArgs {
    /// ORG/NAME[@REVISION].
    repo: String,
    /// Branch, tag or commit (default main).
    #[arg(long)]
    revision: Option<String>,
    /// Also copy the files into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// model: a checkpoint; dataset: manifest.json and its shards.
    #[arg(long, value_enum, default_value = "model")]
    repo_type: RepoTypeArg,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct UploadArgs {
    /// The checkpoint (or, with --repo-type dataset, dataset) directory, or
    /// builtin:NAME, a checkpoint shipped in the program.
    dir: PathBuf,
    /// ORG/NAME[@REVISION].
    repo: String,
    /// Branch to commit to (created from main when missing; default main).
    #[arg(long)]
    revision: Option<String>,
    /// Create the repository private.
    #[arg(long)]
    private: bool,
    /// Commit message.
    #[arg(long)]
    message: Option<String>,
    #[arg(long, value_enum, default_value = "model")]
    repo_type: RepoTypeArg,
    #[arg(long)]
    json: bool,
}

/// `ORG/NAME[@REV]` with `--revision`: one of the two, or both equal.
fn repo_ref(kind: RepoTypeArg, spec: &str, revision: Option<String>) -> anyhow::Result<RepoRef> {
    let mut repo = RepoRef::parse(kind.into(), spec)?;
    match (&repo.revision, revision) {
        (Some(a), Some(b)) if *a != b => {
            anyhow::bail!("{spec}: the revision is given twice, '{a}' and --revision '{b}'")
        }
        (_, Some(b)) => repo.revision = Some(b),
        _ => {}
    }
    Ok(repo)
}

fn print(report: &ShareReport, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::with_headers(["field", "value"]);
    t.push_row(["repository".to_string(), report.repo.clone()]);
    t.push_row(["commit".to_string(), report.commit.clone()]);
    t.push_row(["path".to_string(), report.path.display().to_string()]);
    if let Some(out) = &report.out {
        t.push_row(["copied to".to_string(), out.display().to_string()]);
    }
    if let Some(url) = &report.url {
        t.push_row(["url".to_string(), url.clone()]);
    }
    t.push_row(["files".to_string(), report.files.join(", ")]);
    t.push_row(["checked".to_string(), report.checked.clone()]);
    print!("{t}");
    Ok(ExitCode::SUCCESS)
}

pub fn run(cmd: HubCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        HubCmd::Download(a) => {
            let repo = repo_ref(a.repo_type, &a.repo, a.revision)?;
            let report = plies::checkpoint::download_checked(&repo, a.out.as_deref())?;
            print(&report, a.json)
        }
        HubCmd::Upload(a) => {
            let repo = repo_ref(a.repo_type, &a.repo, a.revision)?;
            let message = a
                .message
                .unwrap_or_else(|| format!("Upload {} with plies", a.dir.display()));
            let dir = upload_dir(&a.dir, a.repo_type)?;
            let report = plies::checkpoint::upload_checked(&dir, &repo, a.private, &message)?;
            print(&report, a.json)
        }
    }
}

/// The folder to upload: `dir` itself, or where a shipped checkpoint
/// (`builtin:NAME`, also `ckpt:builtin:NAME`) is written out, so sharing
/// one is one command from any folder.
fn upload_dir(dir: &std::path::Path, kind: RepoTypeArg) -> anyhow::Result<PathBuf> {
    use plies::checkpoint::{CheckpointSource, BUILTIN_PREFIX};
    let spec = dir.to_string_lossy();
    let shipped = spec
        .strip_prefix("ckpt:")
        .unwrap_or(&spec)
        .starts_with(BUILTIN_PREFIX);
    if !shipped || matches!(kind, RepoTypeArg::Dataset) {
        return Ok(dir.to_path_buf());
    }
    Ok(CheckpointSource::parse(&spec)?.directory()?)
}
