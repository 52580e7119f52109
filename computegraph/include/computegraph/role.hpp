#pragma once
// OperationRole: whether an operation is primal or a linearized (tangent/cotangent) application.
// The role is part of an operation's identity (DESIGN.md "Identity"): Mul(a, b) and Mul(a, dx) with
// active_mask=[fixed, active] both multiply, but transpose differently and so must never alias.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace computegraph {

class OperationRole {
 public:
  /// A primal operation.
  static OperationRole primary() { return OperationRole(); }
  /// A linear operation; `active_mask[i]` says whether input i carries tangent flow.
  static OperationRole linearized(std::vector<bool> active_mask) {
    OperationRole role;
    role.mask_ = std::make_shared<const std::vector<bool>>(std::move(active_mask));
    return role;
  }

  bool is_primary() const { return !mask_; }
  bool is_linearized() const { return mask_ != nullptr; }
  /// Empty for primary operations.
  const std::vector<bool>& active_mask() const { return mask_ ? *mask_ : empty_mask(); }
  bool is_active(std::size_t input) const {
    return mask_ && input < mask_->size() && (*mask_)[input];
  }

  bool operator==(const OperationRole& other) const {
    if (mask_ == other.mask_) return true;
    return mask_ && other.mask_ && *mask_ == *other.mask_;
  }
  std::size_t hash() const {
    std::size_t h = mask_ ? 0x9e3779b97f4a7c15ULL : 0x51ed270b7f4a7c15ULL;
    for (bool b : active_mask()) h = h * 1099511628211ULL + (b ? 2 : 1);
    return h;
  }
  /// "" for primary, "linearized[fixed, active]" otherwise.
  std::string to_string() const {
    if (!mask_) return "";
    std::string s = "linearized[";
    for (std::size_t i = 0; i < mask_->size(); ++i) {
      if (i) s += ", ";
      s += (*mask_)[i] ? "active" : "fixed";
    }
    return s + "]";
  }

 private:
  OperationRole() = default;
  static const std::vector<bool>& empty_mask() {
    static const std::vector<bool> empty;
    return empty;
  }
  /// The mask of a linearized role, shared by all copies (it never changes); null for primary.
  /// A role is stored in every graph node, key node, materialized operation and instruction, so
  /// it is kept to two words, and copying a primary role touches no memory besides the role.
  std::shared_ptr<const std::vector<bool>> mask_;
};

}  // namespace computegraph
