#pragma once
// ADRuleError: a primitive has no rule of the requested kind, or a rule broke its contract.
#include <string>
#include <optional>
#include <utility>

#include "computegraph/error.hpp"

namespace tidu {

enum class RuleKind { Jvp, Transpose };

inline const char* rule_kind_name(RuleKind kind) {
  switch (kind) {
    case RuleKind::Jvp: return "jvp_rule";
    case RuleKind::Transpose: return "transpose_rule";
  }
  return "rule";
}

class ADRuleError : public computegraph::Error {
 public:
  ADRuleError(std::string op_name, RuleKind kind, const std::string& what)
      : computegraph::Error(std::string(rule_kind_name(kind)) + " of " + op_name + ": " + what),
        op_name_(std::move(op_name)),
        kind_(kind) {}

  /// The standard error for a primitive without a rule of this kind.
  static ADRuleError missing(std::string op_name, RuleKind kind) {
    return ADRuleError(std::move(op_name), kind, "no rule is defined for this primitive");
  }

  const std::string& op_name() const { return op_name_; }
  RuleKind kind() const { return kind_; }

 private:
  std::string op_name_;
  RuleKind kind_;
};

/// Result of a try_ transform: a value, or the ADRuleError that stopped it.
template <class T>
class ADResult {
 public:
  ADResult(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  ADResult(ADRuleError error) : error_(std::move(error)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  /// Throws the stored error if there is no value.
  T& value() {
    if (!value_) throw *error_;
    return *value_;
  }
  const ADRuleError& error() const { return *error_; }

 private:
  std::optional<T> value_;
  std::optional<ADRuleError> error_;
};

}  // namespace tidu
