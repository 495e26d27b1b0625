#include "engine/mpi/messages.h"

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace zsim::mpi {
namespace {

constexpr uint64_t kPieceBytes = uint64_t{1} << 30;

std::string ReceiveProbed(const MPI_Status& st, int tag) {
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  std::string bytes(static_cast<size_t>(count), '\0');
  MPI_Recv(bytes.data(), count, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

// True if a message is waiting, its envelope in *st. MpiLock() held by the caller.
bool Probe(int source, int tag, MPI_Status* st) {
  int flag = 0;
  MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, st);
  // Open MPI's probe looks at what it has already taken in before it progresses the transport:
  // a message waiting there is found only by the next probe. Without this second look half of
  // rank 1's batches (of 2) were found one pause late, once rank 0 stopped polling all the time.
  if (!flag) MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, st);
  return flag != 0;
}

// Waits for `request` by polling MPI_Test, MpiLock() held only around each test.
void Wait(MPI_Request* request) {
  int done = 0;
  PollBackoff backoff;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(MpiLock());
      MPI_Test(request, &done, MPI_STATUS_IGNORE);
    }
    if (done) return;
    backoff.Pause();
  }
}

}  // namespace

std::mutex& MpiLock() {
  static std::mutex mu;
  return mu;
}

std::chrono::microseconds PollBackoff::Advance() {
  const std::chrono::microseconds pause = next_;
  next_ = std::min(next_ * 2, std::max(longest_, kFirst));
  return pause;
}

void PollBackoff::Pause() {
  const timespec ts{0, static_cast<long>(Advance().count()) * 1000};
  nanosleep(&ts, nullptr);
}

bool TryReceiveSmall(int source, int tag, std::string* bytes, int* from) {
  MPI_Status st;
  std::lock_guard<std::mutex> lock(MpiLock());
  if (!Probe(source, tag, &st)) return false;
  *bytes = ReceiveProbed(st, tag);
  if (from) *from = st.MPI_SOURCE;
  return true;
}

bool MessageWaiting(int source, int tag) {
  MPI_Status st;
  std::lock_guard<std::mutex> lock(MpiLock());
  return Probe(source, tag, &st);
}

std::string ReceiveSmall(int source, int tag, int* from) {
  std::string bytes;
  PollBackoff backoff;
  while (!TryReceiveSmall(source, tag, &bytes, from)) backoff.Pause();
  return bytes;
}

void SendSmall(int dest, int tag, const std::string& bytes) {
  MPI_Request request;
  {
    std::lock_guard<std::mutex> lock(MpiLock());
    MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD,
              &request);
  }
  Wait(&request);
}

void WaitForAll() {
  MPI_Request request;
  {
    std::lock_guard<std::mutex> lock(MpiLock());
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
  }
  Wait(&request);
}

void SendLarge(int dest, const std::string& bytes) {
  const uint64_t size = bytes.size();
  std::string head(sizeof(size), '\0');
  std::memcpy(head.data(), &size, sizeof(size));
  SendSmall(dest, kTagStateSize, head);
  for (uint64_t off = 0; off < size; off += kPieceBytes) {
    const int n = static_cast<int>(std::min(kPieceBytes, size - off));
    MPI_Request request;
    {
      std::lock_guard<std::mutex> lock(MpiLock());
      MPI_Isend(bytes.data() + off, n, MPI_BYTE, dest, kTagStatePiece, MPI_COMM_WORLD, &request);
    }
    Wait(&request);
  }
}

std::string ReceiveLarge(int source) {
  const std::string head = ReceiveSmall(source, kTagStateSize, nullptr);
  uint64_t size = 0;
  std::memcpy(&size, head.data(), std::min(head.size(), sizeof(size)));
  std::string bytes(size, '\0');
  for (uint64_t off = 0; off < size; off += kPieceBytes) {
    const int n = static_cast<int>(std::min(kPieceBytes, size - off));
    PollBackoff backoff;
    for (;;) {
      std::unique_lock<std::mutex> lock(MpiLock());
      int flag = 0;
      MPI_Iprobe(source, kTagStatePiece, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if (flag) {
        MPI_Recv(bytes.data() + off, n, MPI_BYTE, source, kTagStatePiece, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        break;
      }
      lock.unlock();
      backoff.Pause();
    }
  }
  return bytes;
}

}  // namespace zsim::mpi
