// engine/mpi/messages.h
//
// Point-to-point byte messages between ranks, waited for by polling (MPI_Iprobe or MPI_Test, then
// a short sleep): Open MPI's blocking calls spin a core while they wait (a rank that has finished
// its share and sends its state waits in MPI_Send until rank 0 has finished its own scan), and
// that core is one a rank still scanning on the same node needs.
// Messages of any size: sent as a length, then pieces of at most 1 GiB (MPI counts are int).
//
// Thread safety: MPI runs at MPI_THREAD_SERIALIZED (session.h): one call at a time. These
// functions take MpiLock() around each MPI call they make, so any threads may use them at once
// (rank 0's scan answering requests for work, a rank's input stage and its table exchange during
// the scan); a wait never holds it (it polls).

#ifndef ZSIM_ENGINE_MPI_MESSAGES_H_
#define ZSIM_ENGINE_MPI_MESSAGES_H_

#include <chrono>
#include <mutex>
#include <string>

namespace zsim::mpi {

// Held around every MPI call made while another thread of this process may make one: during the
// scan (messages.cc, table_stream.cc). Only around calls that return at once, never a wait.
std::mutex& MpiLock();

// Tags of zsim's messages.
enum Tag : int {
  kTagWorkRequest = 1,   // rank k -> 0: one byte, 1 = want more, 0 = leaving
  kTagWorkBatch = 2,     // rank 0 -> k: walk items (work.h); empty = the walk is done
  kTagStateSize = 3,     // a serialized state's length (uint64)
  kTagStatePiece = 4,    // its bytes
  kTagTableCommand = 5,  // 0 -> k: stream row r's entries (int32 r), or -1: the report is done
  kTagTableBatch = 6,    // k -> 0: a last-batch flag byte, then entries (entry_wire.h)
  kTagTableShip = 7,     // during the scan, to a shard's owner: int32 row, then entries; row -1:
                         // the sender ships no more (table_stream.h)
};

// Waits until a message with `tag` from `source` (MPI_ANY_SOURCE allowed) is there and receives
// it whole; returns its bytes and sets *from to the sender. For messages sent by SendSmall.
std::string ReceiveSmall(int source, int tag, int* from);
// Sends `bytes` (< 2 GiB) as one message.
void SendSmall(int dest, int tag, const std::string& bytes);
// True (and the message received as ReceiveSmall does) if one is waiting; false at once if not.
bool TryReceiveSmall(int source, int tag, std::string* bytes, int* from);
// True if a message with `tag` from `source` is waiting, which is left there; false at once if
// not. Cheap (two probes under MpiLock()): for a thread that only wakes another to receive it.
bool MessageWaiting(int source, int tag);

// Any size, as a length then pieces.
void SendLarge(int dest, const std::string& bytes);
std::string ReceiveLarge(int source);

// The pauses of one wait between its polls: the first short (25 us), each next twice as long, up
// to `longest`, and short again once something came (Reset). Messages that follow each other
// are taken within tens of microseconds. MPI moves a large message only while both ends call
// into it (Open MPI has no progress thread here), so a wait for a transfer never pauses longer
// than kLongest (200 us, the fixed pause it had). A wait for small messages that come seldom
// pauses longer (rank 0's drain of the last requests for work: 1 ms): on a node whose cores all
// scan, each wake takes a core from a scanning thread for a moment.
class PollBackoff {
 public:
  static constexpr std::chrono::microseconds kFirst{25};
  static constexpr std::chrono::microseconds kLongest{200};

  explicit PollBackoff(std::chrono::microseconds longest = kLongest) : longest_(longest) {}
  // Sleeps the next pause, then doubles it (up to the longest).
  void Pause();
  // The next pause, doubling it (up to the longest), for a wait that sleeps on its own terms.
  std::chrono::microseconds Advance();
  void Reset() { next_ = kFirst; }
  std::chrono::microseconds next() const { return next_; }

 private:
  std::chrono::microseconds longest_;
  std::chrono::microseconds next_ = kFirst;
};

// Returns when every rank has called it (a barrier, waited for by polling): before
// MPI_Finalize, whose own barrier spins.
void WaitForAll();

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_MESSAGES_H_
