//! What a serving survey (and a fleet plan, which searches the same layouts) asks: the
//! request, the concurrencies, the scenario and its choices of types and layouts, the
//! drafter, and whether prompts are prefilled apart.

use std::sync::Arc;

use super::{KvLink, RequestShape, ServingOptions};
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::scenario::Scenario;
use crate::core::workload::Workload;

/// Which layouts a survey prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutChoice {
    /// The scenario's own (`--set tp=4`).
    Given,
    /// Per chip and types, the layout of fewest chips on which one request fits, as
    /// practitioners start.
    Smallest,
    /// Every layout within the chip's scale-up domain, and past it over 2 to 16 domains on
    /// a chip with a network (a frontier's search).
    All,
}

/// Whether prompts are prefilled where sequences decode, on instances of their own, or both
/// ways (each point priced both ways).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Disagg {
    /// Prompts are prefilled where their sequences decode.
    #[default]
    Off,
    /// Prompts are prefilled on instances of their own.
    On,
    /// Each point priced both ways.
    Auto,
}

impl Disagg {
    /// Whether prefill is apart, for each way a point is priced.
    pub fn ways(self) -> &'static [bool] {
        match self {
            Disagg::Off => &[false],
            Disagg::On => &[true],
            Disagg::Auto => &[false, true],
        }
    }
}

/// The model that drafts tokens for speculative decoding.
#[derive(Clone, Copy)]
pub enum Draft<'a> {
    /// A one-layer step of the served model itself, with its embedding and head (DeepSeek-V3's
    /// multi-token-prediction module, or an EAGLE-style head).
    OneLayer,
    /// Another workload, priced at its own scenario on the same chips.
    Workload(&'a Workload, &'a Scenario),
}

/// What a serving survey asks.
pub struct ServingQuery<'a> {
    /// Every request's prompt and output tokens.
    pub shape: RequestShape,
    /// Requests in flight, each priced.
    pub concurrency: Vec<u64>,
    /// The scenario priced; its types are replaced by each choice, its layout by each
    /// layout the choice tries.
    pub scenario: Scenario,
    /// The data type choices to try, each on every chip.
    pub dtype_choices: Vec<Types>,
    /// Which layouts each chip and choice of types tries.
    pub layouts: LayoutChoice,
    /// Prefix caching and speculative decoding.
    pub options: ServingOptions,
    /// The drafter, with `options.speculation`.
    pub draft: Option<Draft<'a>>,
    /// Whether prompts are prefilled apart from decode.
    pub disagg: Disagg,
    /// How a disaggregated prompt's cache reaches its decode instance.
    pub kv_link: KvLink,
    /// The prefill pool's layout where prefill is apart (`tp=2`: degrees not named are 1);
    /// empty to choose it as [`LayoutChoice`] chooses the decode layout.
    pub prefill_sets: Vec<(String, f64)>,
}

impl<'a> ServingQuery<'a> {
    /// The same query under `engine` (`None`: the chip's default) on `chip`: its scenario
    /// priced under that engine, and where `engine_types` holds, the fp8 choice among its
    /// types as the engine runs it there ([`crate::study::plan::engine_types`]).
    pub fn under(
        &self,
        engine: Option<Arc<Engine>>,
        chip: &Chip,
        engine_types: bool,
    ) -> ServingQuery<'a> {
        let mut scenario = self.scenario.clone();
        scenario.set_engine(engine);
        let runs = scenario.engine_on(chip).filter(|_| engine_types);
        let mut dtype_choices: Vec<Types> = Vec::new();
        for t in &self.dtype_choices {
            let t = crate::study::plan::engine_types(*t, chip, runs);
            if !dtype_choices.contains(&t) {
                dtype_choices.push(t);
            }
        }
        ServingQuery {
            shape: self.shape,
            concurrency: self.concurrency.clone(),
            scenario,
            dtype_choices,
            layouts: self.layouts,
            options: self.options,
            draft: self.draft,
            disagg: self.disagg,
            kv_link: self.kv_link,
            prefill_sets: self.prefill_sets.clone(),
        }
    }
}
