// RequestPipeline, authentication: the SASL exchange (op 102) and the enforcement of
// enforce.auth.* / sessionRequireClientSASLAuth. (The auth packet, op 100, is in
// request_pipeline_requests.cc.) As ZooKeeper 3.9.4's ZooKeeperServer.processSasl and
// AuthenticationHelper.enforceAuthentication.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "jute/errors.h"
#include "jute/opcodes.h"
#include "jute/reply.h"
#include "server/replies.h"
#include "server/request_pipeline.h"
#include "server/sasl_identity.h"

namespace zkraft::server {

namespace op = jute::op;
namespace err = jute::err;

bool RequestPipeline::start_auth(std::string* error) {
  std::string why;
  auto enforcement = auth_enforcement(config_, &why);
  if (!enforcement) {
    *error = "config error: " + why;
    return false;
  }
  enforcement_ = std::move(*enforcement);
  auto settings = sasl_settings(config_, &why);
  if (!settings) {
    if (!why.empty()) {
      *error = "config error: " + why;
      return false;
    }
    if (!config_.jaas_config_file.empty()) {
      spdlog::warn("SASL: no section '{}' in {}: clients are not offered SASL (as ZooKeeper)",
                   config_.sasl_login_context, config_.jaas_config_file);
    }
    return true;  // no SASL
  }
  const size_t users = settings->users.size();
  sasl_ = SaslServer::create(std::move(*settings), &why);
  if (!sasl_) {
    *error = "SASL: " + why;
    return false;
  }
  if (sasl_->settings().mechanism == "GSSAPI") {
    spdlog::info("SASL: GSSAPI as {}/{} (section '{}' in {}), keytab {}", sasl_->settings().protocol,
                 sasl_->settings().server_name, config_.sasl_login_context,
                 config_.jaas_config_file, sasl_->settings().keytab);
  } else {
    spdlog::info("SASL: DIGEST-MD5 with {} user(s) of section '{}' in {}", users,
                 config_.sasl_login_context, config_.jaas_config_file);
  }
  if (enforcement_.enabled) {
    std::string schemes;
    for (const auto& s : enforcement_.schemes) schemes += (schemes.empty() ? "" : ",") + s;
    spdlog::info("authentication enforced: schemes {}", schemes);
  }
  return true;
}

void RequestPipeline::handle_sasl(Client& c, QueuedRequest& p, const jute::GetSASLRequest& r) {
  // The step runs here, on the state thread, in the connection's order (sasl_server.h says why);
  // its identity is in c.auth for the next request, and travels with every write (Txn::auth).
  std::string why;
  if (!c.sasl) c.sasl = sasl_->start(&why);
  SaslExchange::Step step;
  if (c.sasl) {
    step = c.sasl->step(r.token.bytes);
  } else {
    step.error = why;
  }
  jute::ReplyHeader h{p.xid, 0, err::kOk};
  if (step.state == SaslExchange::Step::State::kFailed) {
    ++stats_.auth_failed;
    spdlog::warn("Client {}:{} failed to SASL authenticate: {}", c.remote_address, c.remote_port,
                 step.error);
    // ZooKeeper answers with a null token, then closes the connection.
    h.err = enforcement_.sasl_required ? err::kSessionClosedRequireSaslAuth : err::kAuthFailed;
    p.state = QueuedRequest::Answered{jute::reply_frame(h, jute::SetSASLResponse{jute::Buffer::null()}),
                                      true};
    return;
  }
  if (step.state == SaslExchange::Step::State::kComplete) {
    auto add = [&c](jute::Id id) {
      if (std::find(c.auth.begin(), c.auth.end(), id) == c.auth.end()) c.auth.push_back(std::move(id));
    };
    spdlog::info("Session 0x{:x}: adding SASL authorization for authorizationID: {}", c.session_id,
                 step.name);
    if (sasl_super_user(step.name, config_.sasl_super_user)) {
      add(jute::Id{"super", ""});
      spdlog::info("Session 0x{:x}: Authenticated Id '{}' as super user", c.session_id, step.name);
    }
    add(jute::Id{"sasl", step.name});
  }
  jute::SetSASLResponse resp{step.token ? jute::Buffer{std::move(*step.token), false}
                                        : jute::Buffer::null()};
  p.state = QueuedRequest::Answered{jute::reply_frame(h, resp)};
}

bool RequestPipeline::refuse_unauthenticated(Client& c, QueuedRequest& p) {
  if (p.op == op::kAuth || p.op == op::kSasl || enforcement_.authenticated(c.auth)) return false;
  std::string have;
  for (const auto& id : c.auth) have += (have.empty() ? "" : ",") + id.scheme;
  spdlog::warn("Client authentication scheme(s) [{}] does not match with any of the expected "
               "authentication scheme, closing session 0x{:x}", have, c.session_id);
  p.state = QueuedRequest::Answered{
      reply_with_body(jute::ReplyHeader{p.xid, 0, err::kSessionClosedRequireSaslAuth}), true};
  return true;
}

}  // namespace zkraft::server
