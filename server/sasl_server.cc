#include "server/sasl_server.h"

#include <sasl/sasl.h>
#include <sasl/saslplug.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "server/sasl_identity.h"

namespace zkraft::server {

namespace {

// Cyrus takes every callback as int (*)(void); void (*)() in between keeps -Wcast-function-type quiet.
template <class F>
int (*as_callback(F* f))() {
  return reinterpret_cast<int (*)()>(reinterpret_cast<void (*)()>(f));
}

constexpr const char* kAuxpropName = "zkraft-jaas";

// Cyrus asks options through the getopt callback: only the auxprop plugin, the mechanisms and the
// log level are ours; everything else is Cyrus's default (no config file is read). The global
// one (context null) loads both mechanisms; an exchange's (context: its SaslSettings) allows its
// server's one only.
int getopt_cb(void* context, const char* /*plugin*/, const char* option, const char** result,
              unsigned* len) {
  const auto* settings = static_cast<const SaslSettings*>(context);
  if (std::strcmp(option, "auxprop_plugin") == 0) {
    *result = kAuxpropName;
  } else if (std::strcmp(option, "mech_list") == 0) {
    *result = settings ? settings->mechanism.c_str() : "DIGEST-MD5 GSSAPI";
  } else if (std::strcmp(option, "keytab") == 0 && settings && !settings->keytab.empty()) {
    *result = settings->keytab.c_str();
  } else if (std::strcmp(option, "log_level") == 0) {
    *result = "2";  // SASL_LOG_ERR and worse through log_cb
  } else {
    return SASL_FAIL;  // not set: Cyrus's default
  }
  if (len) *len = static_cast<unsigned>(std::strlen(*result));
  return SASL_OK;
}

int log_cb(void* /*context*/, int level, const char* message) {
  if (level <= SASL_LOG_ERR) {
    spdlog::warn("sasl: {}", message ? message : "");
  } else {
    spdlog::debug("sasl: {}", message ? message : "");
  }
  return SASL_OK;
}

// ZooKeeper authorizes whatever authorization id the client asks for, then replaces it by the
// name formed from the authentication id (SaslServerCallbackHandler.handleAuthorizeCallback).
int proxy_policy_cb(sasl_conn_t*, void*, const char*, unsigned, const char*, unsigned, const char*,
                    unsigned, struct propctx*) {
  return SASL_OK;
}

// The user part of a Cyrus user name: Cyrus may hand the auxprop plugin "user@realm".
std::string_view user_part(std::string_view user, std::string_view realm) {
  if (!realm.empty() && user.size() > realm.size() + 1 &&
      user.substr(user.size() - realm.size()) == realm && user[user.size() - realm.size() - 1] == '@') {
    return user.substr(0, user.size() - realm.size() - 1);
  }
  return user;
}

// The auxiliary property plugin: the password of a JAAS user, as the property "userPassword".
int auxprop_lookup(void* /*glob_context*/, sasl_server_params_t* sparams, unsigned flags,
                   const char* user, unsigned ulen) {
  if (!sparams || !user) return SASL_BADPARAM;
  // The exchange's proxy policy callback carries its SaslSettings (Cyrus hands out its own
  // wrapper for getopt, but a connection's proxy policy callback as registered).
  int (*proc)() = nullptr;
  void* context = nullptr;
  if (sparams->utils->getcallback(sparams->utils->conn, SASL_CB_PROXY_POLICY, &proc, &context) !=
          SASL_OK ||
      proc != as_callback(&proxy_policy_cb) || context == nullptr) {
    return SASL_NOUSER;  // not a zkraft exchange
  }
  const auto* settings = static_cast<const SaslSettings*>(context);
  const std::string_view name =
      user_part(std::string_view(user, ulen), sparams->user_realm ? sparams->user_realm
                                                                  : settings->server_name);
  auto it = settings->users.find(std::string(name));
  if (it == settings->users.end()) {
    it = settings->users.find(std::string(user_part(std::string_view(user, ulen), settings->server_name)));
  }
  if (it == settings->users.end()) return SASL_NOUSER;
  const struct propval* to_fetch = sparams->utils->prop_get(sparams->propctx);
  if (!to_fetch) return SASL_NOMEM;
  for (const struct propval* cur = to_fetch; cur->name; ++cur) {
    const char* real = cur->name;
    // Properties of the authentication id are asked with a leading '*'.
    if (flags & SASL_AUXPROP_AUTHZID) {
      if (real[0] == '*') continue;
    } else {
      if (real[0] != '*') continue;
      ++real;
    }
    if (std::strcmp(real, SASL_AUX_PASSWORD_PROP) != 0) continue;
    if (cur->values && !(flags & SASL_AUXPROP_OVERRIDE)) continue;
    if (cur->values) sparams->utils->prop_erase(sparams->propctx, cur->name);
    sparams->utils->prop_set(sparams->propctx, cur->name, it->second.data(),
                             static_cast<int>(it->second.size()));
  }
  return SASL_OK;
}

sasl_auxprop_plug_t auxprop_plugin = {
    0,                               // features
    0,                               // spare
    nullptr,                         // glob_context
    nullptr,                         // auxprop_free
    auxprop_lookup,                  // auxprop_lookup
    const_cast<char*>(kAuxpropName), // name
    nullptr,                         // auxprop_store: users come from the JAAS file only
};

int auxprop_init(const sasl_utils_t*, int max_version, int* out_version,
                 sasl_auxprop_plug_t** plug, const char*) {
  if (max_version < SASL_AUXPROP_PLUG_VERSION) return SASL_BADVERS;
  *out_version = SASL_AUXPROP_PLUG_VERSION;
  *plug = &auxprop_plugin;
  return SASL_OK;
}

sasl_callback_t global_callbacks[] = {
    {SASL_CB_GETOPT, as_callback(&getopt_cb), nullptr},
    {SASL_CB_LOG, as_callback(&log_cb), nullptr},
    {SASL_CB_LIST_END, nullptr, nullptr},
};

// Cyrus keeps process-wide state: initialised once, never torn down (sasl_server_done at exit
// would race exchanges still alive in other objects' destructors).
bool init_cyrus(std::string* error) {
  static std::once_flag once;
  static std::string init_error;
  std::call_once(once, [] {
    int rc = sasl_server_init(global_callbacks, "zkraft");
    if (rc != SASL_OK) {
      init_error = std::string("sasl_server_init: ") + sasl_errstring(rc, nullptr, nullptr);
      return;
    }
    rc = sasl_auxprop_add_plugin(kAuxpropName, auxprop_init);
    if (rc != SASL_OK) {
      init_error = std::string("sasl_auxprop_add_plugin: ") + sasl_errstring(rc, nullptr, nullptr);
    }
  });
  if (!init_error.empty()) {
    if (error) *error = init_error;
    return false;
  }
  return true;
}

}  // namespace

struct SaslExchange::Impl {
  const SaslSettings* settings = nullptr;
  std::vector<sasl_callback_t> callbacks;
  sasl_conn_t* conn = nullptr;
  bool started = false;
  bool over = false;
  ~Impl() {
    if (conn) sasl_dispose(&conn);
  }
};

std::unique_ptr<SaslServer> SaslServer::create(SaslSettings settings, std::string* error) {
  if (!settings.keytab.empty()) setenv("KRB5_KTNAME", settings.keytab.c_str(), 1);
  if (!init_cyrus(error)) return nullptr;
  std::unique_ptr<SaslServer> server(new SaslServer(std::move(settings)));
  // A trial exchange proves the mechanism is there (libsasl2-modules, -gssapi-mit) before the
  // first client.
  std::string why;
  auto trial = server->start(&why);
  if (!trial) {
    if (error) *error = why;
    return nullptr;
  }
  const char* mechs = nullptr;
  if (sasl_listmech(trial->impl_->conn, nullptr, "", " ", "", &mechs, nullptr, nullptr) != SASL_OK ||
      mechs == nullptr || std::strstr(mechs, server->settings_.mechanism.c_str()) == nullptr) {
    if (error) {
      *error = "Cyrus SASL offers no " + server->settings_.mechanism + " mechanism (" +
               (mechs ? mechs : "none") + "; is libsasl2-modules" +
               (server->settings_.mechanism == "GSSAPI" ? "-gssapi-mit" : "") + " installed?)";
    }
    return nullptr;
  }
  return server;
}

SaslServer::~SaslServer() = default;

std::unique_ptr<SaslExchange> SaslServer::start(std::string* error) const {
  auto impl = std::make_unique<SaslExchange::Impl>();
  impl->settings = &settings_;
  void* ctx = const_cast<SaslSettings*>(&settings_);
  impl->callbacks = {
      {SASL_CB_GETOPT, as_callback(&getopt_cb), ctx},
      {SASL_CB_LOG, as_callback(&log_cb), nullptr},
      {SASL_CB_PROXY_POLICY, as_callback(&proxy_policy_cb), ctx},
      {SASL_CB_LIST_END, nullptr, nullptr},
  };
  // SASL_SUCCESS_DATA: ZooKeeper's protocol carries the server's last token (DIGEST-MD5's
  // rspauth) with the success, so the exchange completes on that step, as Java's does; without it
  // Cyrus would wait for one more empty client token that no ZooKeeper client sends.
  int rc = sasl_server_new(settings_.protocol.c_str(), settings_.server_name.c_str(), nullptr,
                           nullptr, nullptr, impl->callbacks.data(), SASL_SUCCESS_DATA,
                           &impl->conn);
  if (rc != SASL_OK) {
    if (error) *error = std::string("sasl_server_new: ") + sasl_errstring(rc, nullptr, nullptr);
    return nullptr;
  }
  // Quality of protection "auth" only, as ZooKeeper's default (javax.security.sasl.qop): the
  // client must not negotiate a security layer nobody applies to the traffic after the exchange.
  sasl_security_properties_t props{};
  props.min_ssf = 0;
  props.max_ssf = 0;
  props.maxbufsize = 0;
  props.security_flags = SASL_SEC_NOANONYMOUS;
  sasl_setprop(impl->conn, SASL_SEC_PROPS, &props);
  return std::unique_ptr<SaslExchange>(new SaslExchange(std::move(impl)));
}

SaslExchange::SaslExchange(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SaslExchange::~SaslExchange() = default;

SaslExchange::Step SaslExchange::step(std::string_view client_token) {
  Step s;
  if (impl_->over) {
    s.error = "the SASL exchange is already over";
    return s;
  }
  const char* out = nullptr;
  unsigned out_len = 0;
  int rc;
  if (!impl_->started) {
    impl_->started = true;
    // DIGEST-MD5 has no initial response: an empty first token means none.
    rc = sasl_server_start(impl_->conn, impl_->settings->mechanism.c_str(),
                           client_token.empty() ? nullptr : client_token.data(),
                           static_cast<unsigned>(client_token.size()), &out, &out_len);
  } else {
    rc = sasl_server_step(impl_->conn, client_token.data(),
                          static_cast<unsigned>(client_token.size()), &out, &out_len);
  }
  if (out != nullptr) s.token = std::string(out, out_len);
  if (rc == SASL_CONTINUE) {
    s.state = Step::State::kContinue;
    return s;
  }
  impl_->over = true;
  if (rc != SASL_OK) {
    const char* detail = sasl_errdetail(impl_->conn);
    s.error = detail ? detail : sasl_errstring(rc, nullptr, nullptr);
    s.token.reset();
    return s;
  }
  const void* authid = nullptr;
  if (sasl_getprop(impl_->conn, SASL_AUTHUSER, &authid) != SASL_OK || authid == nullptr) {
    s.error = "no authenticated user after the SASL exchange";
    s.token.reset();
    return s;
  }
  const auto& cfg = *impl_->settings;
  // Cyrus may qualify a DIGEST-MD5 user with the digest realm; ZooKeeper's name is the bare user.
  // Cyrus's GSSAPI drops the realm of a principal in the default realm ("bob@EXAMPLE.COM" ->
  // "bob"), where ZooKeeper starts from the whole principal: put it back.
  std::string user(cfg.mechanism == "GSSAPI" ? std::string_view(static_cast<const char*>(authid))
                                              : user_part(static_cast<const char*>(authid),
                                                          cfg.server_name));
  if (cfg.mechanism == "GSSAPI" && user.find('@') == std::string::npos && !cfg.default_realm.empty()) {
    user += "@" + cfg.default_realm;
  }
  auto name = sasl_authorized_id(user, PrincipalRules{cfg.remove_host, cfg.remove_realm,
                                                      cfg.default_realm});
  if (!name) {
    s.error = "malformed authentication id \"" + std::string(user) + "\"";
    s.token.reset();
    return s;
  }
  s.state = Step::State::kComplete;
  s.name = std::move(*name);
  return s;
}

}  // namespace zkraft::server
