#include "engine/pipeline/table_gate.h"

namespace zsim::pipeline {

void TableGate::lock_shared() {
  std::unique_lock<std::mutex> lock(mu_);
  ++readers_waiting_;
  cv_.wait(lock, [this] { return !writing_ && writers_waiting_ == 0; });
  --readers_waiting_;
  ++readers_;
}

void TableGate::unlock_shared() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--readers_ == 0) cv_.notify_all();
}

void TableGate::lock() {
  std::unique_lock<std::mutex> lock(mu_);
  ++writers_waiting_;
  cv_.wait(lock, [this] { return !writing_ && readers_ == 0; });
  --writers_waiting_;
  writing_ = true;
}

void TableGate::unlock() {
  std::lock_guard<std::mutex> lock(mu_);
  writing_ = false;
  cv_.notify_all();
}

int TableGate::waiting_readers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return readers_waiting_;
}

int TableGate::waiting_writers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writers_waiting_;
}

}  // namespace zsim::pipeline
