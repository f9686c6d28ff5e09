#pragma once
// One field list per jute record. ZKRAFT_JUTE_RECORD(Type, v.a, v.b, ...) defines both
// encode(Writer&, const Type&) and decode(Reader&, Type&) from the same list of the record's
// fields in wire order, so the two directions cannot drift apart (each used to list every field
// separately). A field's wire form follows from its C++ type: int32_t int, int64_t long, bool,
// std::string ustring, Buffer buffer, std::vector<std::string> a counted vector of ustrings, and
// any other type its own encode/decode (a nested record such as Stat or a vector of ACLs).
// Records with a conditional or counted part (ConnectRequest's optional readOnly, MultiRequest,
// WhoAmIResponse's vector of records) keep hand-written codecs.
//
// Decoding stops at the first field that fails (the Reader is bounded and sticky); a false
// return means the record is to be discarded, whatever fields were assigned before.

#include <cstdint>
#include <string>
#include <vector>

#include "jute/archive.h"

namespace zkraft::jute::record_fields {

inline void put(Writer& w, int32_t v) { w.write_int(v); }
inline void put(Writer& w, int64_t v) { w.write_long(v); }
inline void put(Writer& w, bool v) { w.write_bool(v); }
inline void put(Writer& w, const std::string& v) { w.write_string(v); }
inline void put(Writer& w, const Buffer& v) { w.write_buffer(v); }
inline void put(Writer& w, const std::vector<std::string>& v) { w.write_strings(v); }
template <class T>
auto put(Writer& w, const T& v) -> decltype(encode(w, v)) {
  encode(w, v);
}

inline bool get(Reader& r, int32_t& v) { return r.read_int(v); }
inline bool get(Reader& r, int64_t& v) { return r.read_long(v); }
inline bool get(Reader& r, bool& v) { return r.read_bool(v); }
inline bool get(Reader& r, std::string& v) { return r.read_string(v); }
inline bool get(Reader& r, Buffer& v) { return r.read_buffer(v); }
inline bool get(Reader& r, std::vector<std::string>& v) { return r.read_strings(v); }
template <class T>
auto get(Reader& r, T& v) -> decltype(decode(r, v)) {
  return decode(r, v);
}

template <class... F>
void put_all(Writer& w, const F&... f) {
  (put(w, f), ...);
}
template <class... F>
bool get_all(Reader& r, F&... f) {
  return (get(r, f) && ...);
}

}  // namespace zkraft::jute::record_fields

// Inside namespace zkraft::jute, after the declarations of the types it names.
#define ZKRAFT_JUTE_RECORD(Type, ...)                                   \
  void encode(Writer& w, const Type& v) {                               \
    ::zkraft::jute::record_fields::put_all(w, __VA_ARGS__);             \
  }                                                                     \
  bool decode(Reader& r, Type& v) {                                     \
    return ::zkraft::jute::record_fields::get_all(r, __VA_ARGS__);      \
  }
