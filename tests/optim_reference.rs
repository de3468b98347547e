//! Parity of `plies::optim` with PyTorch.
//!
//! `tests/fixtures/optim_reference.json` is written by
//! `scripts/optim_reference.py` (see its header to regenerate it): a small
//! float64 problem and, for each optimizer configuration, PyTorch's loss and
//! parameters after every step. This test rebuilds the problem in candle from
//! the fixture alone and checks every parameter after every step.

use std::collections::BTreeSet;

use anyhow::{ensure, Context, Result};
use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Tensor, Var};
use plies::optim::{clip_grad_norm, grad_norm, AnyOptimizer, LrSchedule, OptimizerConfig};
use serde::Deserialize;

/// Relative/absolute tolerance of the float64 comparison.
const TOL_F64: f64 = 1e-10;
/// Tolerance when the same trajectories are run in float32.
const TOL_F32: f64 = 2e-4;

#[derive(Deserialize)]
struct Fixture {
    h2_coef: f64,
    steps: usize,
    problem: Problem,
    initial: Initial,
    cases: Vec<Case>,
    schedules: Vec<ScheduleCase>,
}

#[derive(Deserialize)]
struct Problem {
    w: Vec<Vec<f64>>,
    b: Vec<f64>,
    x: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct Initial {
    loss: f64,
    grad_w: Vec<Vec<f64>>,
    grad_b: Vec<f64>,
    grad_norm: f64,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    optimizer: OptimizerConfig,
    #[serde(default)]
    schedule: Option<LrSchedule>,
    #[serde(default)]
    clip_max_norm: Option<f64>,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
struct Step {
    loss: f64,
    lr: f64,
    #[serde(default)]
    grad_norm: Option<f64>,
    w: Vec<Vec<f64>>,
    b: Vec<f64>,
}

#[derive(Deserialize)]
struct ScheduleCase {
    schedule: LrSchedule,
    base_lr: f64,
    lrs: Vec<f64>,
}

fn load() -> Result<Fixture> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/optim_reference.json"
    );
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {path}"))
}

/// The fixture's problem as candle tensors in `dtype`.
struct Model {
    w: Var,
    b: Var,
    x: Tensor,
    y: Tensor,
    h2_coef: f64,
}

fn matrix(rows: &[Vec<f64>], dtype: DType) -> Result<Tensor> {
    let n = rows.len();
    let m = rows.first().map_or(0, Vec::len);
    ensure!(rows.iter().all(|r| r.len() == m), "ragged matrix");
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    Ok(Tensor::from_vec(flat, (n, m), &Device::Cpu)?.to_dtype(dtype)?)
}

impl Model {
    fn new(f: &Fixture, dtype: DType) -> Result<Self> {
        let p = &f.problem;
        let b = Tensor::new(p.b.as_slice(), &Device::Cpu)?.to_dtype(dtype)?;
        Ok(Self {
            w: Var::from_tensor(&matrix(&p.w, dtype)?)?,
            b: Var::from_tensor(&b)?,
            x: matrix(&p.x, dtype)?,
            y: matrix(&p.y, dtype)?,
            h2_coef: f.h2_coef,
        })
    }

    fn vars(&self) -> Vec<Var> {
        vec![self.w.clone(), self.b.clone()]
    }

    /// mean((tanh(X W^T + b) - Y)^2) + h2_coef * mean((X W^T + b)^2)
    fn loss(&self) -> Result<Tensor> {
        let h = self
            .x
            .matmul(&self.w.as_tensor().t()?)?
            .broadcast_add(self.b.as_tensor())?;
        let fit = (h.tanh()? - &self.y)?.sqr()?.mean_all()?;
        let reg = (h.sqr()?.mean_all()? * self.h2_coef)?;
        Ok((fit + reg)?)
    }

    fn w_rows(&self) -> Result<Vec<Vec<f64>>> {
        Ok(self.w.to_dtype(DType::F64)?.to_vec2::<f64>()?)
    }

    fn b_vec(&self) -> Result<Vec<f64>> {
        Ok(self.b.to_dtype(DType::F64)?.to_vec1::<f64>()?)
    }
}

fn scalar(t: &Tensor) -> Result<f64> {
    Ok(t.to_dtype(DType::F64)?.to_scalar::<f64>()?)
}

/// Collects mismatches beyond a relative/absolute tolerance.
struct Checker {
    tol: f64,
    failures: Vec<String>,
    compared: usize,
}

impl Checker {
    fn new(tol: f64) -> Self {
        Self {
            tol,
            failures: vec![],
            compared: 0,
        }
    }

    fn value(&mut self, what: &str, got: f64, want: f64) {
        self.compared += 1;
        let ok = (got - want).abs() <= self.tol * want.abs().max(1.0);
        if !ok {
            self.failures
                .push(format!("{what}: got {got:.17e}, want {want:.17e}"));
        }
    }

    fn slice(&mut self, what: &str, got: &[f64], want: &[f64]) {
        if got.len() != want.len() {
            self.failures
                .push(format!("{what}: length {} != {}", got.len(), want.len()));
            return;
        }
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            self.value(&format!("{what}[{i}]"), *g, *w);
        }
    }

    fn matrix(&mut self, what: &str, got: &[Vec<f64>], want: &[Vec<f64>]) {
        if got.len() != want.len() {
            self.failures
                .push(format!("{what}: rows {} != {}", got.len(), want.len()));
            return;
        }
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            self.slice(&format!("{what}[{i}]"), g, w);
        }
    }

    fn finish(self, context: &str) -> Result<()> {
        ensure!(self.compared > 0, "{context}: nothing compared");
        ensure!(
            self.failures.is_empty(),
            "{context}: {} of {} values differ from PyTorch beyond {}:\n{}",
            self.failures.len(),
            self.compared,
            self.tol,
            self.failures
                .iter()
                .take(40)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
        Ok(())
    }
}

/// Runs one case in `dtype`, comparing each step's loss, lr, clipped norm
/// and parameters.
fn run_case(f: &Fixture, case: &Case, dtype: DType, check: &mut Checker) -> Result<()> {
    let model = Model::new(f, dtype)?;
    let mut opt = AnyOptimizer::new(model.vars(), &case.optimizer)
        .with_context(|| format!("{}: building the optimizer", case.name))?;
    let base_lr = case.optimizer.lr();
    ensure!(
        case.steps.len() == f.steps,
        "{}: {} steps in the fixture, expected {}",
        case.name,
        case.steps.len(),
        f.steps
    );
    for (i, want) in case.steps.iter().enumerate() {
        let at = format!("{} step {i}", case.name);
        if let Some(schedule) = &case.schedule {
            schedule.apply(&mut opt, base_lr, i);
        }
        check.value(&format!("{at} lr"), opt.learning_rate(), want.lr);
        let loss = model.loss()?;
        check.value(&format!("{at} loss"), scalar(&loss)?, want.loss);
        let mut grads: GradStore = loss.backward()?;
        if let Some(max_norm) = case.clip_max_norm {
            let norm = clip_grad_norm(&mut grads, &model.vars(), max_norm)?;
            let want_norm = want
                .grad_norm
                .with_context(|| format!("{at}: clipped case without grad_norm"))?;
            check.value(&format!("{at} grad_norm"), norm, want_norm);
        }
        opt.step(&grads)?;
        check.matrix(&format!("{at} w"), &model.w_rows()?, &want.w);
        check.slice(&format!("{at} b"), &model.b_vec()?, &want.b);
    }
    Ok(())
}

#[test]
fn fixture_problem_matches_pytorch() -> Result<()> {
    let f = load()?;
    let model = Model::new(&f, DType::F64)?;
    let loss = model.loss()?;
    let grads = loss.backward()?;
    let mut check = Checker::new(TOL_F64);
    check.value("initial loss", scalar(&loss)?, f.initial.loss);
    let gw = grads.get(&model.w).context("no gradient for w")?;
    let gb = grads.get(&model.b).context("no gradient for b")?;
    check.matrix("grad w", &gw.to_vec2::<f64>()?, &f.initial.grad_w);
    check.slice("grad b", &gb.to_vec1::<f64>()?, &f.initial.grad_b);
    check.value(
        "grad norm",
        grad_norm(&grads, &model.vars())?,
        f.initial.grad_norm,
    );
    check.finish("initial loss and gradients")
}

#[test]
fn fixture_covers_the_required_configurations() -> Result<()> {
    let f = load()?;
    let names: BTreeSet<&str> = f.cases.iter().map(|c| c.name.as_str()).collect();
    for required in [
        "sgd",
        "momentum",
        "momentum_dampening",
        "momentum_dampening_weight_decay",
        "nesterov",
        "nesterov_weight_decay",
        "rmsprop",
        "rmsprop_momentum",
        "rmsprop_centered",
        "rmsprop_centered_momentum_weight_decay",
        "adamw",
        "momentum_clipped",
        "nesterov_cosine",
    ] {
        ensure!(names.contains(required), "fixture lacks case {required}");
    }
    ensure!(f.steps >= 5, "fixture runs only {} steps", f.steps);
    ensure!(!f.schedules.is_empty(), "fixture has no schedules");
    Ok(())
}

#[test]
fn optimizers_follow_pytorch_trajectories_f64() -> Result<()> {
    let f = load()?;
    let mut failed = vec![];
    for case in &f.cases {
        let mut check = Checker::new(TOL_F64);
        run_case(&f, case, DType::F64, &mut check)?;
        if let Err(e) = check.finish(&case.name) {
            failed.push(format!("{e:#}"));
        }
    }
    ensure!(
        failed.is_empty(),
        "{} of {} cases diverge from PyTorch:\n{}",
        failed.len(),
        f.cases.len(),
        failed.join("\n\n")
    );
    Ok(())
}

#[test]
fn optimizers_follow_pytorch_trajectories_f32() -> Result<()> {
    let f = load()?;
    let mut failed = vec![];
    for case in &f.cases {
        let mut check = Checker::new(TOL_F32);
        run_case(&f, case, DType::F32, &mut check)?;
        if let Err(e) = check.finish(&case.name) {
            failed.push(format!("{e:#}"));
        }
    }
    ensure!(
        failed.is_empty(),
        "f32 runs diverge:\n{}",
        failed.join("\n\n")
    );
    Ok(())
}

#[test]
fn schedules_match_pytorch() -> Result<()> {
    let f = load()?;
    for s in &f.schedules {
        s.schedule
            .validate()
            .with_context(|| format!("{:?}", s.schedule))?;
        let mut check = Checker::new(TOL_F64);
        for (i, want) in s.lrs.iter().enumerate() {
            check.value(
                &format!("{:?} step {i}", s.schedule),
                s.schedule.lr(s.base_lr, i),
                *want,
            );
        }
        check.finish("schedule")?;
    }
    Ok(())
}
