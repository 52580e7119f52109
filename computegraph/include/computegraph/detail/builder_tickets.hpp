#pragma once
// Tickets of active graph builders, for the graph membership hint that every key node carries
// (KeyNode::member_ticket / member_local, written by GraphBuilder).
//
// A builder asks "is this operation already in my graph?" once per added operation. Answering from
// the graph's hash index costs a cache miss per operation on graphs larger than the cache; the key
// node, which interning just read, can answer instead if it records the builder that added it. A
// node may be added by many builders, so the hint is exact only while no other builder overwrites
// it: a builder overwrites a hint only when the builder that wrote it has finished. Whether a
// ticket is still active is one load from a fixed table of slots; tickets are never reused.
#include <atomic>
#include <cstdint>

namespace computegraph::detail {

class BuilderTickets {
 public:
  static constexpr std::uint64_t kNone = 0;

  /// A fresh ticket, active until release(); kNone when every slot is taken (that builder then
  /// answers from its index).
  static std::uint64_t acquire() {
    const std::uint64_t serial = next().fetch_add(1, std::memory_order_relaxed) + 1;
    for (std::uint64_t i = 0; i < kSlots; ++i) {
      const std::uint64_t s = (serial + i) % kSlots;
      const std::uint64_t ticket = serial * kSlots + s;
      std::uint64_t expected = kNone;
      if (slots()[s].compare_exchange_strong(expected, ticket, std::memory_order_acq_rel)) {
        return ticket;
      }
    }
    return kNone;
  }
  static void release(std::uint64_t ticket) {
    if (ticket != kNone) slots()[ticket % kSlots].store(kNone, std::memory_order_release);
  }
  /// Whether `ticket` (not kNone) was acquired and not yet released.
  static bool active(std::uint64_t ticket) {
    return slots()[ticket % kSlots].load(std::memory_order_acquire) == ticket;
  }

 private:
  static constexpr std::uint64_t kSlots = 64;
  static std::atomic<std::uint64_t>* slots() {
    static std::atomic<std::uint64_t> table[kSlots] = {};
    return table;
  }
  static std::atomic<std::uint64_t>& next() {
    static std::atomic<std::uint64_t> counter{0};
    return counter;
  }
};

}  // namespace computegraph::detail
