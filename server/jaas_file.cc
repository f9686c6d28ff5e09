#include "server/jaas_file.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace zkraft::server {

namespace {

// A JAAS file is small and read once at start-up; a bound keeps a wrong path (a device, a log)
// from being read whole.
constexpr std::size_t kMaxJaasFileBytes = 1 << 20;

struct Token {
  enum Kind { kEnd, kWord, kQuoted, kSymbol } kind = kEnd;
  std::string text;
  int line = 1;
};

bool is_word_char(unsigned char c) {
  // Java's ConfigFile word characters, plus '-', '*' and ':' which it would reject only to report
  // a confusing error later; '/' stays out because it starts comments.
  return std::isalnum(c) || c == '.' || c == '_' || c == '$' || c == '-' || c == '*' || c == ':' ||
         c >= 160;
}

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : text_(text) {}

  bool next(Token* token, std::string* error) {
    if (!skip_space_and_comments(error)) return false;
    token->line = line_;
    token->text.clear();
    if (pos_ >= text_.size()) {
      token->kind = Token::kEnd;
      return true;
    }
    const unsigned char c = text_[pos_];
    if (c == '"') return quoted(token, error);
    if (is_word_char(c)) {
      token->kind = Token::kWord;
      while (pos_ < text_.size() && is_word_char(static_cast<unsigned char>(text_[pos_]))) {
        token->text.push_back(text_[pos_++]);
      }
      return true;
    }
    token->kind = Token::kSymbol;
    token->text.push_back(text_[pos_++]);
    return true;
  }

 private:
  bool skip_space_and_comments(std::string* error) {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (static_cast<unsigned char>(c) <= ' ') {
        ++pos_;
      } else if (c == '#' || (c == '/' && peek(1) == '/')) {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        const int start = line_;
        pos_ += 2;
        while (pos_ < text_.size() && !(text_[pos_] == '*' && peek(1) == '/')) {
          if (text_[pos_] == '\n') ++line_;
          ++pos_;
        }
        if (pos_ >= text_.size()) {
          *error = "line " + std::to_string(start) + ": unterminated /* comment";
          return false;
        }
        pos_ += 2;
      } else {
        return true;
      }
    }
    return true;
  }

  bool quoted(Token* token, std::string* error) {
    token->kind = Token::kQuoted;
    ++pos_;  // the opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\n') break;  // Java's tokenizer ends a quoted string at the end of the line
      if (c == '\\' && pos_ < text_.size()) {
        const char e = text_[pos_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'a': c = '\a'; break;
          case 'v': c = '\v'; break;
          default: c = e; break;  // \" \\ and any other character stand for themselves
        }
      }
      token->text.push_back(c);
    }
    if (pos_ >= text_.size() || text_[pos_] != '"') {
      *error = "line " + std::to_string(token->line) + ": unterminated quoted string";
      return false;
    }
    ++pos_;
    return true;
  }

  char peek(std::size_t ahead) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::kEnd: return "end of file";
    case Token::kQuoted: return "\"" + t.text + "\"";
    default: return "'" + t.text + "'";
  }
}

std::optional<JaasControlFlag> parse_flag(std::string_view word) {
  std::string lower;
  for (char c : word) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "required") return JaasControlFlag::kRequired;
  if (lower == "requisite") return JaasControlFlag::kRequisite;
  if (lower == "sufficient") return JaasControlFlag::kSufficient;
  if (lower == "optional") return JaasControlFlag::kOptional;
  return std::nullopt;
}

bool expand(const std::string& value, int line, const JaasPropertyLookup& lookup, std::string* out,
            std::string* error) {
  out->clear();
  std::size_t i = 0;
  while (i < value.size()) {
    if (value[i] == '$' && i + 1 < value.size() && value[i + 1] == '{') {
      const std::size_t close = value.find('}', i + 2);
      if (close == std::string::npos) {
        *error = "line " + std::to_string(line) + ": unterminated ${ in \"" + value + "\"";
        return false;
      }
      const std::string name = value.substr(i + 2, close - i - 2);
      if (name == "/") {
        out->push_back('/');
      } else {
        std::optional<std::string> v = lookup ? lookup(name) : std::nullopt;
        if (!v) {
          *error = "line " + std::to_string(line) + ": property ${" + name + "} is not set";
          return false;
        }
        *out += *v;
      }
      i = close + 1;
    } else {
      out->push_back(value[i++]);
    }
  }
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, const JaasPropertyLookup& lookup) : tok_(text), lookup_(lookup) {}

  std::optional<JaasFile> parse(std::string* error) {
    JaasFile file;
    if (!advance(error)) return std::nullopt;
    while (cur_.kind != Token::kEnd) {
      JaasSection section;
      if (!name(&section.name, "section name", error)) return std::nullopt;
      if (file.section(section.name) != nullptr) {
        *error = "line " + std::to_string(cur_.line) + ": section " + section.name +
                 " appears more than once";
        return std::nullopt;
      }
      if (!symbol("{", "after section name", error)) return std::nullopt;
      while (!is_symbol("}")) {
        JaasLoginModule module;
        if (!module_entry(&module, error)) return std::nullopt;
        section.modules.push_back(std::move(module));
      }
      if (!symbol("}", "", error) || !symbol(";", "after '}'", error)) return std::nullopt;
      file.sections.push_back(std::move(section));
    }
    return file;
  }

 private:
  bool module_entry(JaasLoginModule* module, std::string* error) {
    if (!name(&module->class_name, "login module class name", error)) return false;
    std::string flag_word;
    const int flag_line = cur_.line;
    if (!name(&flag_word, "control flag", error)) return false;
    const std::optional<JaasControlFlag> flag = parse_flag(flag_word);
    if (!flag) {
      *error = "line " + std::to_string(flag_line) + ": control flag " + flag_word +
               " is not required, requisite, sufficient or optional";
      return false;
    }
    module->flag = *flag;
    while (!is_symbol(";")) {
      std::string key;
      if (!name(&key, "option name or ';'", error)) return false;
      if (!symbol("=", "after option " + key, error)) return false;
      const int line = cur_.line;
      std::string raw;
      if (!name(&raw, "value of option " + key, error)) return false;
      std::string value;
      if (!expand(raw, line, lookup_, &value, error)) return false;
      if (module->option(key)) {
        *error = "line " + std::to_string(line) + ": option " + key + " given twice";
        return false;
      }
      module->options.emplace_back(std::move(key), std::move(value));
    }
    return advance(error);  // the ';'
  }

  bool advance(std::string* error) { return tok_.next(&cur_, error); }

  bool is_symbol(std::string_view s) const { return cur_.kind == Token::kSymbol && cur_.text == s; }

  // A word or a quoted string.
  bool name(std::string* out, const std::string& what, std::string* error) {
    if (cur_.kind != Token::kWord && cur_.kind != Token::kQuoted) {
      *error = "line " + std::to_string(cur_.line) + ": expected " + what + ", found " + describe(cur_);
      return false;
    }
    *out = cur_.text;
    return advance(error);
  }

  bool symbol(std::string_view s, const std::string& where, std::string* error) {
    if (!is_symbol(s)) {
      *error = "line " + std::to_string(cur_.line) + ": expected '" + std::string(s) + "'" +
               (where.empty() ? "" : " " + where) + ", found " + describe(cur_);
      return false;
    }
    return advance(error);
  }

  Tokenizer tok_;
  const JaasPropertyLookup& lookup_;
  Token cur_;
};

}  // namespace

std::optional<std::string> JaasLoginModule::option(std::string_view key) const {
  for (const auto& [k, v] : options) {
    if (k == key) return v;
  }
  return std::nullopt;
}

const JaasSection* JaasFile::section(std::string_view name) const {
  for (const JaasSection& s : sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::optional<JaasFile> parse_jaas_file(std::string_view text, const JaasPropertyLookup& lookup,
                                        std::string* error) {
  return Parser(text, lookup).parse(error);
}

std::optional<JaasFile> load_jaas_file(const std::string& path, const JaasPropertyLookup& lookup,
                                       std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot be read";
    return std::nullopt;
  }
  std::string text(kMaxJaasFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    *error = path + ": cannot be read";
    return std::nullopt;
  }
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxJaasFileBytes) {
    *error = path + ": larger than 1 MiB, not a JAAS file";
    return std::nullopt;
  }
  std::string parse_error;
  std::optional<JaasFile> file = parse_jaas_file(text, lookup, &parse_error);
  if (!file) *error = path + ": " + parse_error;
  return file;
}

std::vector<std::pair<std::string, std::string>> jaas_digest_users(const JaasSection& section) {
  constexpr std::string_view kPrefix = "user_";
  std::vector<std::pair<std::string, std::string>> users;
  for (const JaasLoginModule& module : section.modules) {
    for (const auto& [key, value] : module.options) {
      if (key.size() > kPrefix.size() && key.compare(0, kPrefix.size(), kPrefix) == 0) {
        users.emplace_back(key.substr(kPrefix.size()), value);
      }
    }
  }
  return users;
}

}  // namespace zkraft::server
