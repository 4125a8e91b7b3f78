//! `--include-announced`: whether `--chip all` takes in the roadmap chips.

use clap::Args;

use crate::base::error::Error;
use crate::core::chip::{Announced, Chip};

/// The flag of every command that takes `--chip` and may be given `all`.
#[derive(Args, Clone, Copy)]
pub(crate) struct AnnouncedArg {
    /// With `--chip all`: the announced (roadmap) chips too, which `all` leaves out otherwise
    #[arg(long)]
    include_announced: bool,
}

impl AnnouncedArg {
    /// The chips `names` names, `all` with or without the announced ones as the flag says.
    pub(crate) fn load(self, names: &[String]) -> Result<Vec<Chip>, Error> {
        let announced = if self.include_announced {
            Announced::Include
        } else {
            Announced::Exclude
        };
        Chip::load_selected(names, announced)
    }
}
