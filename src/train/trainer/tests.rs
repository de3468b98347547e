//! Tests of the trainer's parts that need no dataset; whole runs are in
//! `tests/train_resume.rs` and `tests/supervised_training.rs`.

use super::*;

#[test]
fn schedules_parse_and_convert() {
    assert_eq!(
        ScheduleSpec::parse("constant").unwrap(),
        ScheduleSpec::Constant
    );
    assert_eq!(
        ScheduleSpec::parse("step:2:0.5").unwrap(),
        ScheduleSpec::Step {
            every_epochs: 2,
            gamma: 0.5
        }
    );
    assert_eq!(
        ScheduleSpec::parse("cosine").unwrap(),
        ScheduleSpec::Cosine { eta_min: 0.0 }
    );
    for bad in ["step", "step:0", "cosine:x", "linear"] {
        let e = ScheduleSpec::parse(bad).unwrap_err().to_string();
        assert!(e.contains("schedule"), "{e}");
    }
    let s = ScheduleSpec::Step {
        every_epochs: 2,
        gamma: 0.5,
    }
    .to_steps(10, 6, 0);
    assert_eq!(s.lr(1.0, 19), 1.0);
    assert_eq!(s.lr(1.0, 20), 0.5);
    let c = ScheduleSpec::Cosine { eta_min: 0.0 }.to_steps(10, 2, 0);
    assert!(c.lr(1.0, 20).abs() < 1e-12);
}

#[test]
fn a_resume_mismatch_names_the_field_and_both_values() {
    use crate::util::run_dir::{first_difference, Depth, RunDirError};
    let a = serde_json::json!({"seed": 1, "optimizer": {"kind": "sgd", "lr": 0.1}});
    let b = serde_json::json!({"seed": 1, "optimizer": {"kind": "sgd", "lr": 0.2}});
    let difference = first_difference(&a, &b, Depth::Nested).unwrap();
    let e = FitError::from(RunDirError::Mismatch {
        path: "run-state".into(),
        difference,
    });
    assert_eq!(
        e.to_string(),
        "--resume: `optimizer.lr` differs from the interrupted run's (it had 0.1, now 0.2); \
         rerun with the same arguments, or start over with --overwrite"
    );
}
