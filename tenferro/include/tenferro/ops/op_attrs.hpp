#pragma once
// OpAttrs: the static attributes of one op application, as a value of the op's own attribute type.
//
// Each op declares its attribute struct beside its definition (for example `DotDims` for
// dot_general, `ReduceAxes` for the reductions). An attribute type T provides
//   bool operator==(const T&) const;     // exact equality (compile-cache identity)
//   std::size_t hash() const;            // consistent with ==
//   void print(std::ostream&) const;     // the text inside the op's printed "[...]"
// and OpAttrs holds one immutable T behind a shared pointer, so copying an op is cheap. Equality
// of two OpAttrs compares their types first, then the values.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "tenferro/error.hpp"

namespace tenferro {

/// Mixes `value` into the running hash `h` (FNV-style; deterministic across runs).
constexpr std::size_t hash_mix(std::size_t h, std::size_t value) {
  return (h ^ (value + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))) * 0x100000001b3ULL;
}
/// Hash of a list of integers (axes, shapes, permutations).
inline std::size_t hash_ints(std::span<const std::int64_t> xs) {
  std::size_t h = xs.size();
  for (std::int64_t x : xs) h = hash_mix(h, static_cast<std::size_t>(x));
  return h;
}

template <class T>
concept OpAttributeType = std::copy_constructible<T> && requires(const T& a, std::ostream& os) {
  { a == a } -> std::convertible_to<bool>;
  { a.hash() } -> std::convertible_to<std::size_t>;
  a.print(os);
};

class OpAttrs {
 public:
  /// No attributes.
  OpAttrs() = default;
  // The first condition keeps OpAttrs itself out before the concept is checked (checking it
  // for OpAttrs would ask whether OpAttrs is copyable, which asks this constructor again).
  template <class T>
    requires(!std::is_same_v<std::remove_cvref_t<T>, OpAttrs> && OpAttributeType<T>)
  explicit OpAttrs(T value) : model_(std::make_shared<const Model<T>>(std::move(value))) {}

  bool empty() const { return model_ == nullptr; }
  /// True if the attributes hold a T.
  template <class T>
  bool holds() const {
    return model_ && model_->type() == typeid(T);
  }
  /// The attributes as a T; throws Error naming both types if they hold something else.
  template <class T>
  const T& get() const {
    if (!holds<T>()) {
      throw Error(std::string("op attributes: expected ") + typeid(T).name() + ", found " +
                  (model_ ? model_->type().name() : "none"));
    }
    return static_cast<const Model<T>*>(model_.get())->value;
  }

  bool operator==(const OpAttrs& other) const {
    if (model_ == other.model_) return true;
    if (!model_ || !other.model_) return false;
    return model_->type() == other.model_->type() && model_->equals(*other.model_);
  }
  std::size_t hash() const { return model_ ? model_->hash() : 0; }
  /// Prints "[...]" (nothing when empty).
  void print(std::ostream& os) const {
    if (!model_) return;
    os << '[';
    model_->print(os);
    os << ']';
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual const std::type_info& type() const = 0;
    virtual bool equals(const Concept& other) const = 0;  // other has the same type
    virtual std::size_t hash() const = 0;
    virtual void print(std::ostream& os) const = 0;
  };
  template <class T>
  struct Model final : Concept {
    explicit Model(T v) : value(std::move(v)) {}
    const std::type_info& type() const override { return typeid(T); }
    bool equals(const Concept& other) const override {
      return value == static_cast<const Model&>(other).value;
    }
    std::size_t hash() const override { return value.hash(); }
    void print(std::ostream& os) const override { value.print(os); }
    T value;
  };
  std::shared_ptr<const Concept> model_;
};

}  // namespace tenferro
