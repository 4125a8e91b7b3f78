//! The params the engine and the studies read by meaning rather than as plain numbers: how
//! many sequences, how many new tokens each, the context they already hold, and the parallel
//! degrees. Declared once here; a workload finds them at load (see
//! [`Workload::param`](crate::core::workload::Workload::param)), and a question that needs
//! one the workload lacks says so by name.

use std::fmt;

/// A param with a meaning the engine relies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScenarioParam {
    /// Sequences in the step.
    Batch,
    /// New tokens per sequence in the step (1 in decode, the prompt in prefill).
    Tokens,
    /// Tokens each sequence's KV cache already holds.
    Context,
    /// Tensor-parallel degree.
    Tp,
    /// Pipeline-parallel degree.
    Pp,
    /// Expert-parallel degree.
    Ep,
    /// Data-parallel replicas.
    Dp,
    /// Tokens a serving engine batches into one step at most (vLLM's
    /// `max_num_batched_tokens`): the activation workspace it reserves is sized for them.
    MaxBatchedTokens,
    /// Prompt tokens a step carries beside its decode tokens (chunked prefill), spread over
    /// [`ScenarioParam::PrefillSeqs`] sequences.
    PrefillTokens,
    /// Sequences the step's prompt tokens belong to, each carrying an equal chunk.
    PrefillSeqs,
    /// Positions each prefilling sequence already holds in its cache (a later chunk of a
    /// long prompt).
    PrefillContext,
    /// Micro-batches of `batch` sequences in flight through the pipeline stages at once.
    MicroBatches,
    /// Share of a serving engine's host work between steps the chip waits for: 1 where an
    /// engine schedules each step, 0 for a bare compiled loop (expected mode).
    EngineHost,
    /// How a lone kernel's benchmark launched the kernel it timed: a `Launch` by its code.
    LaunchMode,
}

/// How a step's kernels are launched, as far as the time of each is concerned (expected mode);
/// the discriminant is the `launch_mode` code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Launch {
    /// None: a profiler's time of the kernel alone.
    Excluded = 0,
    /// Back to back inside a CUDA graph, as serving engines replay decode steps.
    #[default]
    Graph = 1,
    /// One by one from the host, as a step with prompt tokens runs or a benchmark's loop of
    /// launches times them.
    Eager = 2,
}

impl Launch {
    /// The one `launch_mode` names by its code: 0, 1 or 2.
    pub(crate) fn from_code(code: f64) -> Option<Launch> {
        [Launch::Excluded, Launch::Graph, Launch::Eager]
            .into_iter()
            .find(|launch| *launch as u8 as f64 == code)
    }
}

impl ScenarioParam {
    /// Every one, in a fixed order (the index of [`ScenarioParam::index`]).
    pub const ALL: [ScenarioParam; 14] = [
        ScenarioParam::Batch,
        ScenarioParam::Tokens,
        ScenarioParam::Context,
        ScenarioParam::Tp,
        ScenarioParam::Pp,
        ScenarioParam::Ep,
        ScenarioParam::Dp,
        ScenarioParam::MaxBatchedTokens,
        ScenarioParam::PrefillTokens,
        ScenarioParam::PrefillSeqs,
        ScenarioParam::PrefillContext,
        ScenarioParam::MicroBatches,
        ScenarioParam::EngineHost,
        ScenarioParam::LaunchMode,
    ];

    /// The param's name in workload files.
    pub fn name(self) -> &'static str {
        match self {
            ScenarioParam::Batch => "batch",
            ScenarioParam::Tokens => "tokens",
            ScenarioParam::Context => "context",
            ScenarioParam::Tp => "tp",
            ScenarioParam::Pp => "pp",
            ScenarioParam::Ep => "ep",
            ScenarioParam::Dp => "dp",
            ScenarioParam::MaxBatchedTokens => "max_batched_tokens",
            ScenarioParam::PrefillTokens => "prefill_tokens",
            ScenarioParam::PrefillSeqs => "prefill_seqs",
            ScenarioParam::PrefillContext => "prefill_context",
            ScenarioParam::MicroBatches => "micro_batches",
            ScenarioParam::EngineHost => "engine_host",
            ScenarioParam::LaunchMode => "launch_mode",
        }
    }

    /// Position in [`ScenarioParam::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The one called `name`, if any.
    pub fn from_name(name: &str) -> Option<ScenarioParam> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The parallel degrees a layout search tries: tensor, pipeline, expert.
    pub const LAYOUT: [ScenarioParam; 3] =
        [ScenarioParam::Tp, ScenarioParam::Pp, ScenarioParam::Ep];
}

impl fmt::Display for ScenarioParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_index_matches_order() {
        for (i, p) in ScenarioParam::ALL.into_iter().enumerate() {
            assert_eq!(ScenarioParam::from_name(p.name()), Some(p));
            assert_eq!(p.index(), i);
        }
        assert_eq!(ScenarioParam::from_name("hidden"), None);
    }

    #[test]
    fn launch_modes_by_code() {
        assert_eq!(Launch::from_code(0.0), Some(Launch::Excluded));
        assert_eq!(Launch::from_code(1.0), Some(Launch::Graph));
        assert_eq!(Launch::from_code(2.0), Some(Launch::Eager));
        assert_eq!(Launch::from_code(0.5), None);
        assert_eq!(Launch::from_code(3.0), None);
    }
}
