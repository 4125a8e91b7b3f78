//! What a command takes from its merged scenario ([`Settled`]): the workload's name, the
//! scenario file as one of its inputs, and the merged scenario saved once the command has
//! succeeded ([`Saver`]).

use std::path::PathBuf;

use anyhow::Result;

use crate::base::source::Source;
use crate::cli::flags::CostArgs;
use crate::cli::output::{self, Inputs};
use crate::export::atomic::{OutputPlan, Target};

/// What a command takes from its scenario: the workload's name, the files it read, and the
/// merged scenario to save.
pub(crate) struct Settled {
    pub(crate) workload: String,
    file: Option<PathBuf>,
    save: Option<(PathBuf, String)>,
}

impl Settled {
    /// The workload named, the scenario file read (if any), and the merged scenario to save
    /// as `(path, text)` (if asked).
    pub(super) fn new(
        workload: String,
        file: Option<PathBuf>,
        save: Option<(PathBuf, String)>,
    ) -> Settled {
        Settled {
            workload,
            file,
            save,
        }
    }

    /// The scenario file is one of the command's inputs: no output may overwrite it.
    pub(crate) fn inputs(&self, inputs: &mut Inputs) {
        if let Some(path) = &self.file {
            inputs.path(path);
        }
    }

    /// Every file a pricing command reads: the workload (resolved to `source`) and its
    /// template, the chips named by path, the price book, the scenario file.
    pub(crate) fn command_inputs(
        &self,
        source: &Source,
        chips: &[String],
        cost: &CostArgs,
    ) -> Inputs {
        let mut inputs = Inputs::default();
        inputs.workload(&self.workload, source);
        inputs.named(chips);
        inputs.optional(cost.book());
        self.inputs(&mut inputs);
        inputs
    }

    /// The saved scenario's output, checked now against the command's inputs and its other
    /// `targets`; written by [`Saver::commit`] once the command has written its own.
    pub(crate) fn saver(&self, inputs: &Inputs, targets: &[Target]) -> Result<Saver> {
        let Some((path, yaml)) = &self.save else {
            return Ok(Saver(None));
        };
        let save = Target::File(path.clone());
        let mut all = vec![save.clone()];
        all.extend(targets.iter().cloned());
        output::plan_all(all, inputs)?;
        let plan = OutputPlan::new(vec![save], inputs.paths())?;
        Ok(Saver(Some((plan, yaml.clone()))))
    }
}

/// The saved scenario, to be written when the command has succeeded.
pub(crate) struct Saver(Option<(OutputPlan, String)>);

impl Saver {
    pub(crate) fn commit(self) -> Result<()> {
        match self.0 {
            Some((plan, yaml)) => Ok(plan.commit(&[yaml.as_bytes()])?),
            None => Ok(()),
        }
    }
}
