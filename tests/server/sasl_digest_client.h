#pragma once
// A DIGEST-MD5 client for "zookeeper/zk-sasl-md5" through Cyrus's client side, as the Java client
// and Kazoo are: for the tests of the SASL server (sasl_server_test.cc) and the pipeline's SASL
// exchange (request_pipeline_auth_test.cc).

#include <sasl/sasl.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zkraft::server::testing {

template <class F>
int (*client_callback(F* f))() {
  return reinterpret_cast<int (*)()>(reinterpret_cast<void (*)()>(f));
}

struct ClientCreds {
  std::string user, password, authzid;
  std::vector<char> secret_buf = {};
};

inline int client_simple(void* ctx, int id, const char** result, unsigned* len) {
  auto* c = static_cast<ClientCreds*>(ctx);
  if (id == SASL_CB_AUTHNAME) *result = c->user.c_str();
  else if (id == SASL_CB_USER) *result = c->authzid.c_str();
  else return SASL_BADPARAM;
  if (len) *len = static_cast<unsigned>(std::strlen(*result));
  return SASL_OK;
}

inline int client_secret(sasl_conn_t*, void* ctx, int id, sasl_secret_t** psecret) {
  if (id != SASL_CB_PASS) return SASL_BADPARAM;
  auto* c = static_cast<ClientCreds*>(ctx);
  c->secret_buf.assign(sizeof(sasl_secret_t) + c->password.size() + 1, 0);
  auto* s = reinterpret_cast<sasl_secret_t*>(c->secret_buf.data());
  s->len = c->password.size();
  std::memcpy(s->data, c->password.data(), c->password.size());
  *psecret = s;
  return SASL_OK;
}

// A DIGEST-MD5 client for "zookeeper/zk-sasl-md5", as the Java client and Kazoo are.
class DigestClient {
 public:
  explicit DigestClient(ClientCreds creds) : creds_(std::move(creds)) {
    static std::once_flag once;
    std::call_once(once, [] { sasl_client_init(nullptr); });
    cbs_ = {
        {SASL_CB_AUTHNAME, client_callback(&client_simple), &creds_},
        {SASL_CB_USER, client_callback(&client_simple), &creds_},
        {SASL_CB_PASS, client_callback(&client_secret), &creds_},
        {SASL_CB_LIST_END, nullptr, nullptr},
    };
    EXPECT_EQ(sasl_client_new("zookeeper", "zk-sasl-md5", nullptr, nullptr, cbs_.data(), 0, &conn_),
              SASL_OK);
  }
  ~DigestClient() { sasl_dispose(&conn_); }
  // The client's answer to a server token (the first call starts: no initial response).
  int step(const std::optional<std::string>& server, std::string& out) {
    const char* o = nullptr;
    unsigned n = 0;
    int rc;
    if (!started_) {
      started_ = true;
      const char* mech = nullptr;
      rc = sasl_client_start(conn_, "DIGEST-MD5", nullptr, &o, &n, &mech);
    } else {
      rc = sasl_client_step(conn_, server ? server->data() : nullptr,
                            server ? static_cast<unsigned>(server->size()) : 0, nullptr, &o, &n);
    }
    out.assign(o ? o : "", o ? n : 0);
    return rc;
  }

 private:
  ClientCreds creds_;
  std::vector<sasl_callback_t> cbs_;
  sasl_conn_t* conn_ = nullptr;
  bool started_ = false;
};

}  // namespace zkraft::server::testing
