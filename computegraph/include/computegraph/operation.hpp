#pragma once
// The contract an operation set implements to live in a computegraph Graph (docs/design.md, "Layers"
// and "Identity").
//
// computegraph never names a concrete operation: it is generic over any `Op` that satisfies
// `GraphOperation`, and can run programs over any `Op` that also satisfies `EvaluableGraphOperation`.
#include <concepts>
#include <cstddef>
#include <functional>
#include <ostream>
#include <span>
#include <string>

namespace computegraph {

/// Identifies a graph input. Equal keys denote the same input in every graph.
/// Needs value semantics, std::hash, equality and `operator<<` (for the printers).
template <class K>
concept InputKeyType = std::copyable<K> && std::equality_comparable<K> &&
                       requires(const K& key, std::ostream& os) {
                         { std::hash<K>{}(key) } -> std::convertible_to<std::size_t>;
                         { os << key } -> std::same_as<std::ostream&>;
                       };

/// An operation descriptor (an op kind plus its static attributes, such as an axis list).
///
/// - `Operand`: the run-time value type; `Context`: run-time evaluation context.
/// - `input_count()` / `output_count()`: this instance's arity (may depend on attributes).
/// - `==` and `hash()`: structural identity of the descriptor; equal descriptors must hash equally.
/// - `name()`: deterministic printable text, including attributes (used by printers and golden tests).
template <class Op>
concept GraphOperation = std::copyable<Op> && std::equality_comparable<Op> &&
                         InputKeyType<typename Op::InputKey> && requires(const Op& op) {
                           typename Op::Operand;
                           typename Op::Context;
                           { op.input_count() } -> std::convertible_to<std::size_t>;
                           { op.output_count() } -> std::convertible_to<std::size_t>;
                           { op.hash() } -> std::convertible_to<std::size_t>;
                           { op.name() } -> std::convertible_to<std::string>;
                         };

/// A GraphOperation that can be evaluated on operands.
///
/// `eval(ctx, inputs, outputs)` reads `input_count()` operands and assigns every one of the
/// `output_count()` output operands. It must be safe to call concurrently on distinct operands
/// (CompiledProgram runs may overlap across threads) and throw a computegraph::Error on bad operands.
template <class Op>
concept EvaluableGraphOperation =
    GraphOperation<Op> && std::default_initializable<typename Op::Operand> &&
    std::copyable<typename Op::Operand> &&
    requires(const Op& op, typename Op::Context& ctx,
             std::span<const typename Op::Operand* const> inputs,
             std::span<typename Op::Operand> outputs) {
      op.eval(ctx, inputs, outputs);
    };

}  // namespace computegraph
