// Picks the vector-math table for the CPU (once) and the accuracy setting (at every call).
#include "vector_math.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tenferro/error.hpp"

namespace tenferro {

namespace {
MathAccuracy accuracy_from_environment() {
  const char* env = std::getenv("TENFERRO_MATH_ACCURACY");
  if (env == nullptr || std::strcmp(env, "fast") == 0) return MathAccuracy::Fast;
  if (std::strcmp(env, "precise") == 0) return MathAccuracy::Precise;
  throw Error(std::string("TENFERRO_MATH_ACCURACY: expected \"fast\" or \"precise\", got \"") + env + "\"");
}

std::atomic<MathAccuracy>& accuracy_setting() {
  static std::atomic<MathAccuracy> setting{accuracy_from_environment()};
  return setting;
}
}  // namespace

void set_math_accuracy(MathAccuracy accuracy) {
  if (accuracy != MathAccuracy::Fast && accuracy != MathAccuracy::Precise) {
    throw Error("set_math_accuracy: expected MathAccuracy::Fast or MathAccuracy::Precise, got " +
                std::to_string(static_cast<int>(accuracy)));
  }
  accuracy_setting().store(accuracy, std::memory_order_relaxed);
}

MathAccuracy math_accuracy() { return accuracy_setting().load(std::memory_order_relaxed); }

const char* to_string(MathAccuracy accuracy) { return accuracy == MathAccuracy::Precise ? "precise" : "fast"; }

namespace exec {

namespace {
bool cpu_has_avx2_fma() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
}
}  // namespace

const VectorMathTable& vector_math_for(MathAccuracy accuracy) {
  if (accuracy == MathAccuracy::Precise) return cpu_has_avx2_fma() ? vector_math_sleef_avx2() : vector_math_sleef_sse2();
  return cpu_has_avx2_fma() ? vector_math_mvec_avx2() : vector_math_mvec_sse2();
}

const VectorMathTable& vector_math() { return vector_math_for(math_accuracy()); }

std::vector<const VectorMathTable*> runnable_vector_math_tables() {
  std::vector<const VectorMathTable*> tables{&vector_math_sleef_sse2(), &vector_math_mvec_sse2()};
  if (cpu_has_avx2_fma()) {
    tables.push_back(&vector_math_sleef_avx2());
    tables.push_back(&vector_math_mvec_avx2());
  }
  return tables;
}

}  // namespace exec
}  // namespace tenferro
