#pragma once
// The client port's TLS context (OpenSSL through Boost.Asio), built from TlsOptions, and the
// source that hands it to new connections and reloads it when the store files change.
//
// TlsContextSource::current() is what each accepted connection takes: a connection keeps the
// context it started with, so a reload changes only connections accepted after it. A reload
// that fails (a half-written file, a key that does not match its certificate) keeps the old
// context and logs why; it is retried when the files change again.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "server/tls_options.h"

namespace zkraft::server {

// Builds an SSL context for the server side: loads the key store (PEM: certificate chain and
// private key in one file, the key optionally encrypted with the password; PKCS12), the trust
// store, sets client verification, versions and ciphers. Null + one line in *error on failure.
// `both_roles`: one context that also dials (the peer transport), else accept only.
std::shared_ptr<boost::asio::ssl::context> build_server_tls_context(const TlsOptions& options,
                                                                    std::string* error,
                                                                    bool both_roles = false);

// The subject of a certificate as Java's X500Principal.getName() spells it (RFC 2253): RDNs
// last-first, "," between them, "+" inside a multi-valued one, the keywords CN C L ST STREET O OU
// DC UID and OID=#hex for other attributes, RFC 2253 escapes. This is the x509 scheme's id.
std::string x509_subject_rfc2253(X509* cert);

class TlsContextSource {
 public:
  // `initial` is the context built at start-up from `options`.
  TlsContextSource(TlsOptions options, std::shared_ptr<boost::asio::ssl::context> initial);
  ~TlsContextSource();

  const TlsOptions& options() const { return options_; }
  // The context new connections use. Any thread.
  std::shared_ptr<boost::asio::ssl::context> current() const;

  // Polls the store files once a second on `ex` (when options().cert_reload) and reloads on a
  // change. stop() cancels the timer; call it on `ex`'s thread or before that thread runs.
  void watch(boost::asio::any_io_executor ex);
  void stop();

  // One check now (tests, and the timer): reloads when a store file changed since the last
  // check. Returns true when the context was replaced.
  bool reload_if_changed();
  uint64_t reloads() const { return reloads_.load(); }
  uint64_t failed_reloads() const { return failed_reloads_.load(); }

 private:
  std::string signature() const;  // the store files' identity: inode, size, mtime
  void arm();

  const TlsOptions options_;
  mutable std::mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> current_;
  std::string signature_;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> failed_reloads_{0};
};

}  // namespace zkraft::server
