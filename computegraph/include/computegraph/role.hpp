#pragma once
// OperationRole: whether an operation is primal or a linearized (tangent/cotangent) application.
// The role is part of an operation's identity (docs/design.md, "Roles"): Mul(a, b) and Mul(a, dx)
// with active_mask=[fixed, active] both multiply, but transpose differently and so must never alias.
//
// Masks of up to 64 inputs are stored inline as bits (copying a role allocates nothing); longer
// ones share one immutable heap copy.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace computegraph {

class OperationRole {
 public:
  /// A primal operation.
  static OperationRole primary() { return OperationRole(); }
  /// A linear operation; `active_mask[i]` says whether input i carries tangent flow.
  static OperationRole linearized(const std::vector<bool>& active_mask) {
    OperationRole role;
    role.linearized_ = true;
    role.size_ = static_cast<std::uint32_t>(active_mask.size());
    if (active_mask.size() > kInline) {
      role.long_mask_ = std::make_shared<const std::vector<bool>>(active_mask);
    } else {
      for (std::size_t i = 0; i < active_mask.size(); ++i) {
        if (active_mask[i]) role.bits_ |= std::uint64_t{1} << i;
      }
    }
    return role;
  }

  static OperationRole linearized(std::initializer_list<bool> active_mask) {
    if (active_mask.size() > kInline) return linearized(std::vector<bool>(active_mask));
    OperationRole role;
    role.linearized_ = true;
    role.size_ = static_cast<std::uint32_t>(active_mask.size());
    std::size_t i = 0;
    for (bool active : active_mask) role.bits_ |= std::uint64_t{active} << i++;
    return role;
  }

  bool is_primary() const { return !linearized_; }
  bool is_linearized() const { return linearized_; }
  /// Number of entries of the active mask (0 for primary operations).
  std::size_t mask_size() const { return size_; }
  /// Empty for primary operations.
  std::vector<bool> active_mask() const {
    std::vector<bool> mask(size_);
    for (std::size_t i = 0; i < size_; ++i) mask[i] = is_active(i);
    return mask;
  }
  bool is_active(std::size_t input) const {
    if (!linearized_ || input >= size_) return false;
    if (long_mask_) return (*long_mask_)[input];
    return (bits_ >> input) & 1;
  }

  bool operator==(const OperationRole& other) const {
    if (linearized_ != other.linearized_ || size_ != other.size_ || bits_ != other.bits_) return false;
    if (long_mask_ == other.long_mask_) return true;
    return long_mask_ && other.long_mask_ && *long_mask_ == *other.long_mask_;
  }
  std::size_t hash() const {
    std::size_t h = linearized_ ? 0x9e3779b97f4a7c15ULL : 0x51ed270b7f4a7c15ULL;
    for (std::size_t i = 0; i < size_; ++i) h = h * 1099511628211ULL + (is_active(i) ? 2 : 1);
    return h;
  }
  /// "" for primary, "linearized[fixed, active]" otherwise.
  std::string to_string() const {
    if (!linearized_) return "";
    std::string s = "linearized[";
    for (std::size_t i = 0; i < size_; ++i) {
      if (i) s += ", ";
      s += is_active(i) ? "active" : "fixed";
    }
    return s + "]";
  }

 private:
  static constexpr std::size_t kInline = 64;
  OperationRole() = default;
  bool linearized_ = false;
  std::uint32_t size_ = 0;
  std::uint64_t bits_ = 0;  // masks of up to kInline entries
  std::shared_ptr<const std::vector<bool>> long_mask_;  // longer masks
};

}  // namespace computegraph
