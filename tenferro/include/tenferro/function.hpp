#pragma once
// tenferro::Function<R(A...)>: the type-erased callable of the user tier (traced functions,
// control-flow bodies, schedules). It behaves as std::function for what the library needs
// (construct from any callable, copy, call, test for emptiness) and exists so that the user tier
// does not include <functional>, which in libstdc++ also brings <unordered_map> and the
// algorithms: that was about a tenth of a user file's compile time.
//
// Copies copy the callable (value semantics, as std::function). Calling an empty Function throws
// BindingError. The call is const and calls the held callable as an lvalue, which may be a
// mutable lambda (also as std::function).
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tenferro {

namespace detail {
/// Throws BindingError: an empty tenferro::Function was called (out of line: src/api/transforms.cpp).
[[noreturn]] void throw_empty_function();
}  // namespace detail

template <class Signature>
class Function;

template <class R, class... A>
class Function<R(A...)> {
 public:
  Function() = default;
  Function(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): as std::function
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Function> && std::is_invocable_r_v<R, std::decay_t<F>&, A...>)
  Function(F&& f)  // NOLINT(google-explicit-constructor): callables convert, as to std::function
      : held_(new Held<std::decay_t<F>>(std::forward<F>(f))) {}

  Function(const Function& other) : held_(other.held_ ? other.held_->clone() : nullptr) {}
  Function(Function&& other) noexcept : held_(std::exchange(other.held_, nullptr)) {}
  Function& operator=(const Function& other) {
    if (this != &other) Function(other).swap(*this);
    return *this;
  }
  Function& operator=(Function&& other) noexcept {
    Function(std::move(other)).swap(*this);
    return *this;
  }
  ~Function() { delete held_; }

  R operator()(A... args) const {
    if (!held_) detail::throw_empty_function();
    return held_->call(std::forward<A>(args)...);
  }
  explicit operator bool() const { return held_ != nullptr; }
  void swap(Function& other) noexcept { std::swap(held_, other.held_); }

 private:
  struct Callable {
    virtual ~Callable() = default;
    virtual R call(A... args) = 0;
    virtual Callable* clone() const = 0;
  };
  template <class F>
  struct Held final : Callable {
    template <class G>
    explicit Held(G&& g) : f(std::forward<G>(g)) {}
    R call(A... args) override {
      if constexpr (std::is_void_v<R>) {
        f(std::forward<A>(args)...);
      } else {
        return f(std::forward<A>(args)...);
      }
    }
    Callable* clone() const override { return new Held(f); }
    F f;
  };
  // An owning raw pointer rather than std::unique_ptr: each signature's unique_ptr instantiation
  // cost more compile time than the three lines of ownership it saves.
  Callable* held_ = nullptr;
};

}  // namespace tenferro
