// Fuzzes nri::TrunkReader, which reads the bytes a container runtime sends hcashare-nri
// (NRI's mux frames carrying ttrpc messages). Invariants beyond "no crash": the messages
// and the error do not depend on how the bytes are cut, and each message read encodes back
// to bytes that read as the same message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "nri/wire.h"

namespace {

using hcashare::nri::Message;

bool Same(const Message& a, const Message& b) {
  return a.conn == b.conn && a.stream_id == b.stream_id && a.type == b.type && a.flags == b.flags &&
         a.payload == b.payload;
}

std::vector<Message> Read(const std::string& bytes, size_t piece, bool* ok) {
  hcashare::nri::TrunkReader reader;
  std::vector<Message> out;
  *ok = true;
  for (size_t at = 0; at < bytes.size() && *ok; at += piece) {
    *ok = reader.Feed(std::string_view(bytes).substr(at, piece)).ok();
    while (auto m = reader.Next()) out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0] % 13 + 1;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  bool ok_whole = false, ok_cut = false;
  const std::vector<Message> whole = Read(bytes, bytes.size() + 1, &ok_whole);
  const std::vector<Message> cut = Read(bytes, piece, &ok_cut);
  FUZZ_CHECK(ok_whole == ok_cut);
  if (ok_whole) {
    FUZZ_CHECK(whole.size() == cut.size());
    for (size_t i = 0; i < whole.size(); ++i) FUZZ_CHECK(Same(whole[i], cut[i]));
  }
  for (const Message& m : whole) {
    auto again = hcashare::nri::EncodeMessage(m);
    FUZZ_CHECK(again.ok());
    bool ok = false;
    const std::vector<Message> back = Read(*again, again->size(), &ok);
    FUZZ_CHECK(ok && back.size() == 1 && Same(back[0], m));
  }
  return 0;
}
