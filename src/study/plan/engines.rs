//! What an engine decides in a plan: the engines searched on each chip, and what the fp8
//! choice runs as under each (W8A8 with its KV cache type where the engine and chip do so).

use std::sync::Arc;

use super::PlanRequest;
use crate::base::dtype::{DType, Role};
use crate::base::format::Format;
use crate::base::types::{TypeKey, Types};
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::scenario::{Mode, Scenario};

/// What a choice of fp8 weights with 16-bit activations (the `fp8` choice of `plan` and
/// `serving`) runs as under `engine` on `chip`: W8A8, activations quantised per token on
/// the fly, where the engine does so and the chip multiplies in fp8 (W8A16 where it does
/// not), and an fp8 KV cache where the engine's default is one. Every other choice, and
/// every choice without an engine (roofline mode), is returned as it is: a named format
/// keeps its meaning.
pub fn engine_types(types: Types, chip: &Chip, engine: Option<&Engine>) -> Types {
    let Some(engine) = engine else {
        return types;
    };
    let fp8_weights = types.role(Role::Weight) == Format::Fp8;
    let wide_activations = types.role(Role::Activation).element().bytes() >= 2.0;
    if !(fp8_weights && wide_activations) {
        return types;
    }
    let quant = engine.terms().quant;
    let mut t = types;
    if quant.fp8_activations && chip.matrix_peak(DType::Fp8).is_ok() {
        t.set(TypeKey::Role(Role::Activation), Format::Fp8);
    }
    if quant.fp8_kv_cache {
        t.set(TypeKey::Role(Role::Kv), Format::Fp8);
    }
    t
}

/// Whether `axes` leave the activations' and the KV cache's types to the engine (neither is
/// an axis), so that [`engine_types`] expands the fp8 choice.
pub fn leaves_types_to_engine(axes: &[(TypeKey, Vec<Format>)]) -> bool {
    let named = |role: Role| axes.iter().any(|(k, _)| *k == TypeKey::Role(role));
    !named(Role::Activation) && !named(Role::Kv)
}

/// The engines a plan searches: each one asked for, or the chip's default (`None`); one in
/// roofline mode, where every engine prices alike.
pub(super) fn engines_searched(request: &PlanRequest) -> Vec<Option<Arc<Engine>>> {
    match (request.scenario.mode(), request.engines.is_empty()) {
        (Mode::Roofline, _) | (_, true) => vec![None],
        _ => request.engines.iter().cloned().map(Some).collect(),
    }
}

/// The type choices on `chip` under `scenario`'s engine there: the fp8 choice as the engine
/// runs it where the request leaves the types to it, each choice once.
pub(super) fn choices_on(request: &PlanRequest, scenario: &Scenario, chip: &Chip) -> Vec<Types> {
    let engine = scenario.engine_on(chip).filter(|_| request.engine_types);
    let mut choices: Vec<Types> = Vec::new();
    for t in &request.dtype_choices {
        let t = engine_types(*t, chip, engine);
        if !choices.contains(&t) {
            choices.push(t);
        }
    }
    choices
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp8_choice() -> Types {
        let mut t = Types::default();
        t.set(TypeKey::Role(Role::Weight), Format::Fp8);
        t
    }

    #[test]
    fn the_fp8_choice_runs_as_the_engine_and_chip_allow() {
        let h200 = Chip::named("h200").unwrap();
        let a100 = Chip::named("a100-80gb").unwrap();
        let trt = crate::core::engine::builtin("trtllm").unwrap();
        let vllm = crate::core::engine::builtin("vllm").unwrap();
        let roles = |t: Types| (t.role(Role::Activation), t.role(Role::Kv));
        // TensorRT-LLM: W8A8 and an fp8 cache; vLLM: W8A8, the cache as it was.
        let t = engine_types(fp8_choice(), &h200, Some(&trt));
        assert_eq!(roles(t), (Format::Fp8, Format::Fp8));
        let t = engine_types(fp8_choice(), &h200, Some(&vllm));
        assert_eq!(roles(t), (Format::Fp8, Format::Bf16));
        // No fp8 math on A100: W8A16, the cache still the engine's.
        let t = engine_types(fp8_choice(), &a100, Some(&trt));
        assert_eq!(roles(t), (Format::Bf16, Format::Fp8));
        // No engine (roofline mode), or a choice that is not fp8 weights: as given.
        assert_eq!(engine_types(fp8_choice(), &h200, None), fp8_choice());
        assert_eq!(
            engine_types(Types::default(), &h200, Some(&trt)),
            Types::default()
        );
        let axes = [(TypeKey::Role(Role::Activation), vec![Format::Bf16])];
        assert!(!leaves_types_to_engine(&axes));
        assert!(leaves_types_to_engine(&[]));
    }
}
