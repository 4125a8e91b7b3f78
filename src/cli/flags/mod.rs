//! The flag groups several commands share, as clap types, with their conversions to the
//! library's own values: one scenario and the chips it is priced on (`scenario`), how a
//! chip-hour is costed (`cost`), the images in a request's prompt (`images`), and what the output looks like and where it goes (`output`).
//! A leaf: it imports no other module of the command line, and each command's own flags live
//! in its file under `commands`.

mod cost;
mod images;
mod output;
mod scenario;

pub(crate) use cost::{parse_power_cap, CostArg, CostArgs};
pub(crate) use images::{parse_whole, ImageArgs};
pub(crate) use output::{FormatArg, OutputArgs, ShapeArgs, RAW_TEXT_HELP};
pub(crate) use scenario::{
    engines, AnnouncedArg, ChipsScenario, DisaggArg, Given, ModeArg, ScenarioArgs, ScenarioFileArgs,
};
