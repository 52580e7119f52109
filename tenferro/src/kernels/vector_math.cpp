// Picks the vector-math table for the instruction set (the CPU's widest, or TENFERRO_VECTOR_ISA) and
// the accuracy setting, at every call.
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

const char* to_string(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::Sse2: return "sse2";
    case VectorIsa::Avx2: return "avx2";
    case VectorIsa::Avx512: return "avx512";
  }
  return "?";
}

namespace {
// AVX2 tables also use FMA; the AVX-512 ones need only AVX-512F (libmvec's and SLEEF's "avx512f"
// entry points, and our intrinsics: loads, stores, arithmetic, masked compares).
bool cpu_runs(VectorIsa isa) {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f");
  switch (isa) {
    case VectorIsa::Sse2: return true;
    case VectorIsa::Avx2: return avx2;
    case VectorIsa::Avx512: return avx512;
  }
  return false;
}

VectorIsa widest_runnable() {
  if (cpu_runs(VectorIsa::Avx512)) return VectorIsa::Avx512;
  return cpu_runs(VectorIsa::Avx2) ? VectorIsa::Avx2 : VectorIsa::Sse2;
}

void check_runs(VectorIsa isa, const char* who) {
  if (!cpu_runs(isa)) {
    throw Error(std::string(who) + ": this CPU cannot run the " + to_string(isa) + " vector math (the widest it runs is " +
                to_string(widest_runnable()) + ")");
  }
}

VectorIsa isa_from_environment() {
  const char* env = std::getenv("TENFERRO_VECTOR_ISA");
  if (env == nullptr || *env == '\0') return widest_runnable();
  for (VectorIsa isa : {VectorIsa::Sse2, VectorIsa::Avx2, VectorIsa::Avx512}) {
    if (std::strcmp(env, to_string(isa)) == 0) {
      check_runs(isa, "TENFERRO_VECTOR_ISA");
      return isa;
    }
  }
  throw Error(std::string("TENFERRO_VECTOR_ISA: expected \"sse2\", \"avx2\" or \"avx512\", got \"") + env + "\"");
}

std::atomic<VectorIsa>& isa_setting() {
  static std::atomic<VectorIsa> setting{isa_from_environment()};
  return setting;
}
}  // namespace

VectorIsa vector_isa() { return isa_setting().load(std::memory_order_relaxed); }

void set_vector_isa(VectorIsa isa) {
  check_runs(isa, "set_vector_isa");
  isa_setting().store(isa, std::memory_order_relaxed);
}

const VectorMathTable& vector_math_for(MathAccuracy accuracy) {
  const bool precise = accuracy == MathAccuracy::Precise;
  switch (vector_isa()) {
    case VectorIsa::Avx512: return precise ? vector_math_sleef_avx512() : vector_math_mvec_avx512();
    case VectorIsa::Avx2: return precise ? vector_math_sleef_avx2() : vector_math_mvec_avx2();
    case VectorIsa::Sse2: break;
  }
  return precise ? vector_math_sleef_sse2() : vector_math_mvec_sse2();
}

const VectorMathTable& vector_math() { return vector_math_for(math_accuracy()); }

std::vector<const VectorMathTable*> runnable_vector_math_tables() {
  std::vector<const VectorMathTable*> tables{&vector_math_sleef_sse2(), &vector_math_mvec_sse2()};
  if (cpu_runs(VectorIsa::Avx2)) {
    tables.push_back(&vector_math_sleef_avx2());
    tables.push_back(&vector_math_mvec_avx2());
  }
  if (cpu_runs(VectorIsa::Avx512)) {
    tables.push_back(&vector_math_sleef_avx512());
    tables.push_back(&vector_math_mvec_avx512());
  }
  return tables;
}

std::vector<VectorIsa> runnable_vector_isas() {
  std::vector<VectorIsa> isas;
  for (VectorIsa isa : {VectorIsa::Sse2, VectorIsa::Avx2, VectorIsa::Avx512}) {
    if (cpu_runs(isa)) isas.push_back(isa);
  }
  return isas;
}

}  // namespace exec

const char* vector_instruction_set() { return exec::to_string(exec::vector_isa()); }

}  // namespace tenferro
