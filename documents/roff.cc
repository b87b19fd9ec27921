#include "documents/roff.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace bitsift::documents {
namespace {

// The bytes of the character that starts at s[i], by its lead byte (a stray byte is one),
// never past the end of s.
size_t CharLength(std::string_view s, size_t i) {
  const unsigned char b = static_cast<unsigned char>(s[i]);
  const size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
  return std::min(n, s.size() - i);
}

// groff's special characters (groff_char(7)) as UTF-8: those man pages use, the accented
// Latin letters and the Greek alphabet. Other names give nothing.
const std::unordered_map<std::string_view, std::string_view>& SpecialChars() {
  static const auto* table = new std::unordered_map<std::string_view, std::string_view>{
      {"em", "—"},
      {"en", "–"},
      {"hy", "-"},
      {"-", "-"},
      {"aq", "'"},
      {"dq", "\""},
      {"lq", "“"},
      {"rq", "”"},
      {"oq", "‘"},
      {"cq", "’"},
      {"Bq", "„"},
      {"bq", "‚"},
      {"Fo", "«"},
      {"Fc", "»"},
      {"fo", "‹"},
      {"fc", "›"},
      {"bu", "·"},
      {"ci", "○"},
      {"co", "©"},
      {"rg", "®"},
      {"tm", "™"},
      {"de", "°"},
      {"dg", "†"},
      {"dd", "‡"},
      {"sc", "§"},
      {"ps", "¶"},
      {"ct", "¢"},
      {"Po", "£"},
      {"Ye", "¥"},
      {"Eu", "€"},
      {"eu", "€"},
      {"Do", "$"},
      {"mu", "×"},
      {"di", "÷"},
      {"+-", "±"},
      {"<=", "≤"},
      {">=", "≥"},
      {"!=", "≠"},
      {"==", "≡"},
      {"=~", "≅"},
      {"~~", "≈"},
      {"ap", "∼"},
      {"->", "→"},
      {"<-", "←"},
      {"<>", "↔"},
      {"ua", "↑"},
      {"da", "↓"},
      {"rA", "⇒"},
      {"lA", "⇐"},
      {"hA", "⇔"},
      {"uA", "⇑"},
      {"dA", "⇓"},
      {"if", "∞"},
      {"sr", "√"},
      {"pl", "+"},
      {"mi", "−"},
      {"eq", "="},
      {"**", "∗"},
      {"ti", "~"},
      {"ha", "^"},
      {"a^", "^"},
      {"a~", "~"},
      {"ga", "`"},
      {"aa", "´"},
      {"rs", "\\"},
      {"sl", "/"},
      {"ba", "|"},
      {"br", "│"},
      {"ul", "_"},
      {"ru", "_"},
      {"lB", "["},
      {"rB", "]"},
      {"lC", "{"},
      {"rC", "}"},
      {"la", "⟨"},
      {"ra", "⟩"},
      {"sh", "#"},
      {"at", "@"},
      {"ss", "ß"},
      {"AE", "Æ"},
      {"ae", "æ"},
      {"OE", "Œ"},
      {"oe", "œ"},
      {"/O", "Ø"},
      {"/o", "ø"},
      {"/L", "Ł"},
      {"/l", "ł"},
      {"-D", "Ð"},
      {"Sd", "ð"},
      {"TP", "Þ"},
      {"Tp", "þ"},
      {"IJ", "Ĳ"},
      {"ij", "ĳ"},
      {".i", "ı"},
      {"r!", "¡"},
      {"r?", "¿"},
      {"12", "½"},
      {"14", "¼"},
      {"34", "¾"},
      {"S1", "¹"},
      {"S2", "²"},
      {"S3", "³"},
      {"Of", "ª"},
      {"Om", "º"},
      {"no", "¬"},
      {"tno", "¬"},
      {"fa", "∀"},
      {"te", "∃"},
      {"mo", "∈"},
      {"nm", "∉"},
      {"es", "∅"},
      {"ca", "∩"},
      {"cu", "∪"},
      {"sb", "⊂"},
      {"sp", "⊃"},
      {"ib", "⊆"},
      {"ip", "⊇"},
      {"gr", "∇"},
      {"pd", "∂"},
      {"is", "∫"},
      {"integral", "∫"},
      {"sum", "∑"},
      {"product", "∏"},
      {"AN", "∧"},
      {"OR", "∨"},
      {"pt", "∝"},
      {"or", "|"},
      {"ff", "ff"},
      {"fi", "fi"},
      {"fl", "fl"},
      {"Fi", "ffi"},
      {"Fl", "ffl"},
      {"OK", "✓"},
      {"sq", "□"},
      {"lz", "◊"},
      {"ho", "˛"},
      {"ah", "ˇ"},
      {"ao", "˚"},
      {"a\"", "˝"},
      {"a-", "¯"},
      {"a.", "˙"},
      {"ab", "˘"},
      {"ac", "¸"},
      {"ad", "¨"},
      {"bv", "│"},
      {"hbar", "ħ"},
      {"st", "∋"},
      {"tf", "∴"},
      {"md", "⋅"},
      {"pc", "·"},
      {"lh", "☜"},
      {"rh", "☞"},
      {"CL", "♣"},
      {"SP", "♠"},
      {"HE", "♥"},
      {"DI", "♦"},
      {"u2010", "-"},
      // Accented letters: \(:a, \('e, ...
      {":a", "ä"},
      {":e", "ë"},
      {":i", "ï"},
      {":o", "ö"},
      {":u", "ü"},
      {":y", "ÿ"},
      {":A", "Ä"},
      {":E", "Ë"},
      {":I", "Ï"},
      {":O", "Ö"},
      {":U", "Ü"},
      {":Y", "Ÿ"},
      {"'a", "á"},
      {"'e", "é"},
      {"'i", "í"},
      {"'o", "ó"},
      {"'u", "ú"},
      {"'y", "ý"},
      {"'c", "ć"},
      {"'A", "Á"},
      {"'E", "É"},
      {"'I", "Í"},
      {"'O", "Ó"},
      {"'U", "Ú"},
      {"'Y", "Ý"},
      {"'C", "Ć"},
      {"`a", "à"},
      {"`e", "è"},
      {"`i", "ì"},
      {"`o", "ò"},
      {"`u", "ù"},
      {"`A", "À"},
      {"`E", "È"},
      {"`I", "Ì"},
      {"`O", "Ò"},
      {"`U", "Ù"},
      {"^a", "â"},
      {"^e", "ê"},
      {"^i", "î"},
      {"^o", "ô"},
      {"^u", "û"},
      {"^A", "Â"},
      {"^E", "Ê"},
      {"^I", "Î"},
      {"^O", "Ô"},
      {"^U", "Û"},
      {"~a", "ã"},
      {"~n", "ñ"},
      {"~o", "õ"},
      {"~A", "Ã"},
      {"~N", "Ñ"},
      {"~O", "Õ"},
      {",c", "ç"},
      {",C", "Ç"},
      {"oa", "å"},
      {"oA", "Å"},
      {"vs", "š"},
      {"vS", "Š"},
      {"vz", "ž"},
      {"vZ", "Ž"},
      // Greek: \(*a ...
      {"*a", "α"},
      {"*b", "β"},
      {"*g", "γ"},
      {"*d", "δ"},
      {"*e", "ε"},
      {"*z", "ζ"},
      {"*y", "η"},
      {"*h", "θ"},
      {"*i", "ι"},
      {"*k", "κ"},
      {"*l", "λ"},
      {"*m", "μ"},
      {"*n", "ν"},
      {"*c", "ξ"},
      {"*o", "ο"},
      {"*p", "π"},
      {"*r", "ρ"},
      {"*s", "σ"},
      {"ts", "ς"},
      {"*t", "τ"},
      {"*u", "υ"},
      {"*f", "φ"},
      {"*x", "χ"},
      {"*q", "ψ"},
      {"*w", "ω"},
      {"*A", "Α"},
      {"*B", "Β"},
      {"*G", "Γ"},
      {"*D", "Δ"},
      {"*E", "Ε"},
      {"*Z", "Ζ"},
      {"*Y", "Η"},
      {"*H", "Θ"},
      {"*I", "Ι"},
      {"*K", "Κ"},
      {"*L", "Λ"},
      {"*M", "Μ"},
      {"*N", "Ν"},
      {"*C", "Ξ"},
      {"*O", "Ο"},
      {"*P", "Π"},
      {"*R", "Ρ"},
      {"*S", "Σ"},
      {"*T", "Τ"},
      {"*U", "Υ"},
      {"*F", "Φ"},
      {"*X", "Χ"},
      {"*Q", "Ψ"},
      {"*W", "Ω"},
  };
  return *table;
}

// A code point as UTF-8 ("" for none: surrogates, beyond U+10FFFF).
std::string Utf8(uint32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    if (c >= 0xD800 && c < 0xE000) return s;
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x110000) {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

// The characters of special character `name`: a table name, "uXXXX" (or a composite
// "u0041_0301": its code points in order), "charN"; "" if unknown.
std::string Special(std::string_view name) {
  const auto& table = SpecialChars();
  if (auto it = table.find(name); it != table.end()) return std::string(it->second);
  if (name.size() >= 5 && name[0] == 'u') {
    std::string out;
    size_t at = 1;
    while (at < name.size()) {
      size_t end = name.find('_', at);
      if (end == std::string_view::npos) end = name.size();
      const std::string hex(name.substr(at, end - at));
      if (hex.empty() || hex.size() > 6 ||
          hex.find_first_not_of("0123456789ABCDEFabcdef") != std::string::npos) {
        return "";
      }
      out += Utf8(static_cast<uint32_t>(std::strtoul(hex.c_str(), nullptr, 16)));
      at = end + 1;
    }
    return out;
  }
  if (name.size() > 4 && name.substr(0, 4) == "char") {
    const std::string digits(name.substr(4));
    if (digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long c = std::strtoul(digits.c_str(), nullptr, 10);
      if (c < 256) return Utf8(static_cast<uint32_t>(c));
    }
  }
  return "";
}

// mdoc's standards (.St), as groff's doc-common names them; others give their argument.
const std::map<std::string_view, std::string_view>& Standards() {
  static const auto* table = new std::map<std::string_view, std::string_view>{
      {"-ansiC", "ANSI X3.159-1989 (“ANSI C89”)"},
      {"-ansiC-89", "ANSI X3.159-1989 (“ANSI C89”)"},
      {"-isoC", "ISO/IEC 9899:1990 (“ISO C90”)"},
      {"-isoC-90", "ISO/IEC 9899:1990 (“ISO C90”)"},
      {"-isoC-99", "ISO/IEC 9899:1999 (“ISO C99”)"},
      {"-isoC-2011", "ISO/IEC 9899:2011 (“ISO C11”)"},
      {"-p1003.1", "IEEE Std 1003.1 (“POSIX.1”)"},
      {"-p1003.1-88", "IEEE Std 1003.1-1988 (“POSIX.1”)"},
      {"-p1003.1-90", "IEEE Std 1003.1-1990 (“POSIX.1”)"},
      {"-p1003.1-96", "ISO/IEC 9945-1:1996 (“POSIX.1”)"},
      {"-p1003.1-2001", "IEEE Std 1003.1-2001 (“POSIX.1”)"},
      {"-p1003.1-2004", "IEEE Std 1003.1-2004 (“POSIX.1”)"},
      {"-p1003.1-2008", "IEEE Std 1003.1-2008 (“POSIX.1”)"},
      {"-p1003.2", "IEEE Std 1003.2 (“POSIX.2”)"},
      {"-p1003.2-92", "IEEE Std 1003.2-1992 (“POSIX.2”)"},
      {"-p1003.1b-93", "IEEE Std 1003.1b-1993 (“POSIX.1b”)"},
      {"-p1003.1c-95", "IEEE Std 1003.1c-1995 (“POSIX.1c”)"},
      {"-susv2", "Version 2 of the Single UNIX Specification (“SUSv2”)"},
      {"-susv3", "Version 3 of the Single UNIX Specification (“SUSv3”)"},
      {"-susv4", "Version 4 of the Single UNIX Specification (“SUSv4”)"},
      {"-svid4", "System V Interface Definition, Fourth Edition (“SVID4”)"},
      {"-xpg4", "X/Open Portability Guide Issue 4 (“XPG4”)"},
      {"-xpg4.2", "X/Open Portability Guide Issue 4, Version 2 (“XPG4.2”)"},
      {"-ieee754", "IEEE Std 754-1985"},
      {"-iso8802-3", "ISO/IEC 8802-3:1989"},
  };
  return *table;
}

// The volume a man page's section names (groff's an-old.tmac and mdoc's doc-common).
std::string_view VolumeOfSection(std::string_view section, bool mdoc) {
  static const char* const kVolumes[] = {
      "General Commands Manual",          "System Calls Manual",     "Library Functions Manual",
      "Kernel Interfaces Manual",         "File Formats Manual",     "Games Manual",
      "Miscellaneous Information Manual", "System Manager's Manual", "Kernel Developer's Manual"};
  if (section.size() == 1 && section[0] >= '1' && section[0] <= '9') {
    return kVolumes[section[0] - '1'];
  }
  if (!mdoc && section == "3p") return "Perl Programmers Reference Guide";
  return "";
}

// mdoc macros that may be called on a macro line after its first word.
const std::unordered_set<std::string_view>& MdocCallable() {
  static const auto* set = new std::unordered_set<std::string_view>{
      "Ac", "Ao", "Ap", "Aq", "Ar", "At", "Bc", "Bo", "Bq", "Brc", "Bro", "Brq", "Bsx", "Bx",
      "Cm", "Dc", "Do", "Dq", "Dv", "Dx", "Ec", "Em", "En", "Eo",  "Er",  "Es",  "Ev",  "Fa",
      "Fc", "Fl", "Fn", "Fo", "Ft", "Fx", "Ic", "Li", "Lk", "Ms",  "Mt",  "Nm",  "No",  "Ns",
      "Nx", "Oc", "Oo", "Op", "Ot", "Ox", "Pa", "Pc", "Pf", "Po",  "Pq",  "Qc",  "Ql",  "Qo",
      "Qq", "Sc", "So", "Sq", "Sx", "Sy", "Tn", "Ux", "Va", "Vt",  "Xc",  "Xo",  "Xr",  "%A",
      "%B", "%C", "%D", "%I", "%J", "%N", "%O", "%P", "%Q", "%R",  "%T",  "%U",  "%V",  "Ad",
      "An", "Cd", "Ad", "In", "Lb", "St", "Ex", "Rv", "Ud", "Bt",  "Fd",  "Em",  "Hf",  "Tg"};
  return *set;
}

// mdoc macros that begin a line only, and whose arguments are not text.
const std::unordered_set<std::string_view>& MdocSilent() {
  static const auto* set = new std::unordered_set<std::string_view>{
      "Bd", "Ed", "Bl", "El", "Bf", "Ef", "Bk", "Ek", "Pp",
      "Lp", "Sm", "Db", "Rs", "Re", "Tg", "Xc", "Xo", "An"};
  return *set;
}

// mdoc macros that begin a line only, with text arguments.
const std::unordered_set<std::string_view>& MdocLineOnly() {
  static const auto* set = new std::unordered_set<std::string_view>{"Dd", "Dt", "Os", "Sh", "Ss",
                                                                    "Nd", "It", "D1", "Dl", "Ot"};
  return *set;
}

bool IsClosingPunct(std::string_view w) {
  return !w.empty() && w.find_first_not_of(".,:;)]?!") == std::string_view::npos;
}
bool IsOpeningPunct(std::string_view w) {
  return !w.empty() && w.find_first_not_of("([") == std::string_view::npos;
}

constexpr int kMaxDepth = 16;                // string interpolation inside strings
constexpr size_t kMaxLineBytes = 1 << 20;    // a logical line longer is cut
constexpr size_t kMaxOutputLine = 1 << 20;   // expansion of one line stops here
constexpr size_t kMaxStrings = 4096;         // strings a page may define
constexpr size_t kMaxStringBytes = 4 << 10;  // bytes of one defined string
constexpr size_t kMaxMacroBytes = 64 << 10;  // bytes of one defined macro
constexpr size_t kMaxExpandSteps = 1 << 20;  // escapes interpreted for one line
// Lines that macros the page defines may run, in all: macros that call themselves several
// times would otherwise run exponentially many.
constexpr size_t kMaxMacroLines = 1 << 20;

}  // namespace

// The converter proper: fed one logical source line at a time.
struct RoffToText::Converter {
  Converter(ByteSink& o, std::vector<uint32_t>* lines) : out(o), source_lines(lines) {
    strings = {{"lq", "\\(lq"}, {"rq", "\\(rq"}, {"R", "\\(rg"},  {"Tm", "\\(tm"},
               {"S", ""},       {"HF", ""},      {"Lq", "\\(lq"}, {"Rq", "\\(rq"}};
  }

  // ------------------------------------------------------------------------ output
  // Appends `text` (what source line `number` shows) to the output; `continued` (a \c): the
  // next source line's text goes on the same line.
  void Emit(const std::string& text, uint32_t number, bool continued) {
    if (!text.empty()) {
      if (at_line_start) {
        if (source_lines != nullptr) source_lines->push_back(number);
        at_line_start = false;
      }
      pending += text;
    }
    if (!continued && !at_line_start) {
      pending += '\n';
      at_line_start = true;
    }
    if (pending.size() >= (64 << 10)) Flush();
  }
  void Flush() {
    if (!pending.empty()) out.Write(pending);
    pending.clear();
  }
  void Finish() {
    if (!at_line_start) {
      pending += '\n';
      at_line_start = true;
    }
    Flush();
  }

  // ------------------------------------------------------------------------ escapes
  // Reads an escape's name argument at s[*i]: "(xx", "[name]" or one character.
  static std::string_view NameArg(std::string_view s, size_t* i) {
    if (*i >= s.size()) return {};
    if (s[*i] == '(') {
      const std::string_view n = s.substr(*i + 1, 2);
      *i = std::min(s.size(), *i + 3);
      return n;
    }
    if (s[*i] == '[') {
      size_t end = s.find(']', *i + 1);
      if (end == std::string_view::npos) end = s.size();
      const std::string_view n = s.substr(*i + 1, end - *i - 1);
      *i = std::min(s.size(), end + 1);
      return n;
    }
    return s.substr((*i)++, 1);
  }
  // Reads a delimited argument at s[*i] ('...', or any delimiter).
  static std::string_view Delimited(std::string_view s, size_t* i) {
    if (*i >= s.size()) return {};
    const char d = s[*i];
    size_t end = s.find(d, *i + 1);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view a = s.substr(*i + 1, end - *i - 1);
    *i = std::min(s.size(), end + 1);
    return a;
  }

  // Appends what `s` shows to *o: escapes interpreted, a comment ended. *continued is set by
  // a \c.
  void Expand(std::string_view s, std::string* o, int depth, bool* continued) {
    for (size_t i = 0; i < s.size() && o->size() < kMaxOutputLine;) {
      if (++expand_steps > kMaxExpandSteps) return;  // strings that nest without end
      const char c = s[i];
      if (c != '\\') {
        const size_t next = s.find('\\', i);
        const size_t end = next == std::string_view::npos ? s.size() : next;
        o->append(s.substr(i, end - i));
        i = end;
        continue;
      }
      if (i + 1 >= s.size()) break;
      const char e = s[i + 1];
      i += 2;
      switch (e) {
        case '"':
        case '#':
          return;  // a comment
        case '\\':
        case 'e':
        case 'E':
          *o += '\\';
          break;
        case '-':
        case '.':
          *o += e;
          break;
        case '&':
        case ')':
        case '/':
        case ',':
        case '|':
        case '^':
        case '%':
        case ':':
        case '{':
        case '}':
        case 'a':
        case 'd':
        case 'u':
        case 'r':
        case 'p':
        case 'y':
          break;
        case ' ':
        case '~':
        case '0':
          *o += ' ';
          break;
        case 't':
          *o += '\t';
          break;
        case 'c':
          *continued = true;
          break;
        case '\'':
          *o += "´";
          break;
        case '`':
          *o += '`';
          break;
        case '(':
        case '[': {
          --i;
          const std::string_view name = NameArg(s, &i);
          std::string_view first = name.substr(0, name.find(' '));
          *o += Special(first);
          break;
        }
        case 'C':
          *o += Special(Delimited(s, &i));
          break;
        case 'N': {
          const std::string code(Delimited(s, &i));
          if (!code.empty() && code.size() <= 7 &&
              code.find_first_not_of("0123456789") == std::string::npos) {
            *o += Utf8(static_cast<uint32_t>(std::strtoul(code.c_str(), nullptr, 10)));
          }
          break;
        }
        case 'f':
        case 'F':
        case 'm':
        case 'M':
        case 'g':
        case 'k':
        case 'V':
        case 'Y':
        case '$':
        case 'O':
          NameArg(s, &i);
          break;
        case 'n':
          if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
          NameArg(s, &i);
          break;
        case 's':
          if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
          if (i < s.size() && (s[i] == '(' || s[i] == '[')) {
            NameArg(s, &i);
          } else if (i < s.size() && s[i] == '\'') {
            Delimited(s, &i);
          } else if (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            // One digit, or two when the first is 1..3 (\s10 is size 10; \s4 size 4).
            const char first = s[i++];
            if (first >= '1' && first <= '3' && i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
          }
          break;
        case 'h':
        case 'v':
        case 'w':
        case 'l':
        case 'L':
        case 'X':
        case 'D':
        case 'x':
        case 'R':
        case 'S':
        case 'H':
        case 'A':
        case 'B':
        case 'T':
        case 'U':
        case 'I':
          Delimited(s, &i);
          break;
        case 'o':
        case 'Z':
        case 'b': {
          const std::string_view inner = Delimited(s, &i);
          if (depth < kMaxDepth) Expand(inner, o, depth + 1, continued);
          break;
        }
        case 'z':
          break;  // the next character is printed (with no width): it follows as text
        case '*': {
          const std::string_view name = NameArg(s, &i);
          const std::string_view bare = name.substr(0, name.find(' '));
          auto it = strings.find(std::string(bare));
          if (it != strings.end() && depth < kMaxDepth) {
            const std::string value = it->second;  // (a copy: expanding may define strings)
            Expand(value, o, depth + 1, continued);
          }
          break;
        }
        case '\n':
          break;
        default:
          *o += e;  // \x for an unknown x prints x
          break;
      }
    }
  }

  // What `s` shows, with the translations of .tr applied.
  std::string Show(std::string_view s, bool* continued) {
    std::string o;
    expand_steps = 0;
    Expand(s, &o, 0, continued);
    if (!translate.empty()) {
      std::string t;
      for (size_t i = 0; i < o.size();) {
        const size_t n = CharLength(o, i);
        const std::string ch = o.substr(i, n);
        auto it = translate.find(ch);
        t += it != translate.end() ? it->second : ch;
        i += n;
      }
      o.swap(t);
    }
    return o;
  }
  std::string Show(std::string_view s) {
    bool ignored = false;
    return Show(s, &ignored);
  }

  // ------------------------------------------------------------------------ requests
  // A request or macro line's arguments, as roff splits them: by spaces, "..." quoting (""
  // inside is a quote), escapes kept whole; a comment ends them.
  static std::vector<std::string> SplitArgs(std::string_view s) {
    std::vector<std::string> args;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
      if (i >= s.size()) break;
      if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '#')) break;
      std::string a;
      if (s[i] == '"') {
        ++i;
        while (i < s.size()) {
          if (s[i] == '"') {
            if (i + 1 < s.size() && s[i + 1] == '"') {
              a += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (s[i] == '\\' && i + 1 < s.size()) {
            if (s[i + 1] == '"') break;  // a comment inside quotes ends the line
            a.append(s.substr(i, 2));
            i += 2;
            continue;
          }
          a += s[i++];
        }
      } else {
        while (i < s.size() && s[i] != ' ' && s[i] != '\t') {
          if (s[i] == '\\' && i + 1 < s.size()) {
            if (s[i + 1] == '"' || s[i + 1] == '#') break;
            a.append(s.substr(i, 2));
            i += 2;
            continue;
          }
          a += s[i++];
        }
      }
      args.push_back(std::move(a));
      if (i < s.size() && s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '#'))
        break;
    }
    return args;
  }

  std::string Joined(const std::vector<std::string>& args, size_t from, const char* sep,
                     bool* continued) {
    std::string o;
    for (size_t k = from; k < args.size(); ++k) {
      if (k > from) o += sep;
      o += Show(args[k], continued);
    }
    return o;
  }

  // A numeric condition or expression: registers (\n(.g is 1: groff; others 0), numbers,
  // + - * / % < > <= >= = == & : and parentheses, evaluated left to right as roff does.
  long Evaluate(std::string_view s, size_t* i, int depth = 0) {
    long value = Term(s, i, depth);
    while (*i < s.size()) {
      const char op = s[*i];
      std::string_view two = s.substr(*i, 2);
      int len = 1;
      if (two == "<=" || two == ">=" || two == "==" || two == "<>" || two == "<?" || two == ">?")
        len = 2;
      if (std::strchr("+-*/%<>=&:", op) == nullptr) break;
      *i += static_cast<size_t>(len);
      const long r = Term(s, i, depth);
      if (len == 2) {
        if (two == "<=") value = value <= r;
        if (two == ">=") value = value >= r;
        if (two == "==") value = value == r;
        if (two == "<>") value = value != r;
        if (two == "<?") value = std::min(value, r);
        if (two == ">?") value = std::max(value, r);
        continue;
      }
      switch (op) {
        case '+':
          value += r;
          break;
        case '-':
          value -= r;
          break;
        case '*':
          value *= r;
          break;
        case '/':
          value = r != 0 ? value / r : 0;
          break;
        case '%':
          value = r != 0 ? value % r : 0;
          break;
        case '<':
          value = value < r;
          break;
        case '>':
          value = value > r;
          break;
        case '=':
          value = value == r;
          break;
        case '&':
          value = value > 0 && r > 0;
          break;
        case ':':
          value = value > 0 || r > 0;
          break;
      }
      value = std::clamp(value, -1000000000L, 1000000000L);
    }
    return value;
  }
  long Term(std::string_view s, size_t* i, int depth) {
    if (*i >= s.size()) return 0;
    long sign = 1;
    while (*i < s.size() && (s[*i] == '-' || s[*i] == '+')) {
      if (s[*i] == '-') sign = -sign;
      ++*i;
    }
    long v = 0;
    if (*i < s.size() && s[*i] == '(' && depth < kMaxDepth) {
      ++*i;
      v = Evaluate(s, i, depth + 1);
      if (*i < s.size() && s[*i] == ')') ++*i;
    } else if (*i + 1 < s.size() && s[*i] == '\\' && s[*i + 1] == 'n') {
      *i += 2;
      if (*i < s.size() && (s[*i] == '+' || s[*i] == '-')) ++*i;
      const std::string_view reg = NameArg(s, i);
      v = reg == ".g" ? 1 : reg == ".x" ? 1 : reg == ".y" ? 22 : reg == ".T" ? 0 : 0;
    } else if (*i + 1 < s.size() && s[*i] == '\\' && s[*i + 1] == 'w') {
      *i += 2;
      v = static_cast<long>(Delimited(s, i).size());
    } else {
      while (*i < s.size() && s[*i] >= '0' && s[*i] <= '9') {
        v = std::min(v * 10 + (s[*i] - '0'), 1000000000L);
        ++*i;
      }
      if (*i < s.size() && s[*i] == '.') {
        ++*i;
        while (*i < s.size() && s[*i] >= '0' && s[*i] <= '9') ++*i;
      }
    }
    // A unit (i c p P m n v u f M s z) is dropped.
    if (*i < s.size() && std::strchr("icpPmnvufMsz", s[*i]) != nullptr && s[*i] != '\0') ++*i;
    return sign * v;
  }

  // Reads a condition at the start of `s`; *rest gets what follows it (the body).
  bool Condition(std::string_view s, std::string_view* rest) {
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    bool negate = false;
    while (i < s.size() && s[i] == '!') {
      negate = !negate;
      ++i;
    }
    bool value = false;
    if (i >= s.size()) {
      value = false;
    } else if (std::strchr("ntoevh", s[i]) != nullptr &&
               (i + 1 >= s.size() || s[i + 1] == ' ' || s[i + 1] == '\t' || s[i + 1] == '\\')) {
      value = s[i] == 'n' || s[i] == 'o';
      ++i;
    } else if (std::strchr("drcmFS", s[i]) != nullptr && i + 1 < s.size() && s[i + 1] == ' ') {
      const char kind = s[i];
      i += 2;
      while (i < s.size() && s[i] == ' ') ++i;
      const size_t start = i;
      while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
      const std::string name(s.substr(start, i - start));
      value = kind == 'd' ? strings.count(name) > 0 || macros.count(name) > 0 : kind == 'c';
    } else if ((s[i] >= '0' && s[i] <= '9') || s[i] == '(' || s[i] == '-' || s[i] == '+' ||
               (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == 'w'))) {
      value = Evaluate(s, &i) > 0;
    } else {
      // 'a'b': a string comparison, each side as it shows.
      const char d = s[i];
      const size_t mid = s.find(d, i + 1);
      const size_t end = mid == std::string_view::npos ? mid : s.find(d, mid + 1);
      if (end == std::string_view::npos) {
        i = s.size();
      } else {
        value = Show(s.substr(i + 1, mid - i - 1)) == Show(s.substr(mid + 1, end - mid - 1));
        i = end + 1;
      }
    }
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    *rest = s.substr(i);
    return value != negate;
  }

  // The braces a line opens (\{) less those it closes (\}).
  static int BraceBalance(std::string_view s) {
    int n = 0;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      if (s[i] != '\\') continue;
      if (s[i + 1] == '{') ++n;
      if (s[i + 1] == '}') --n;
      ++i;
    }
    return n;
  }

  // The body of a conditional: run when `value`, else skipped with any block it opens.
  void Body(bool value, std::string_view body, uint32_t number) {
    if (value) {
      if (body.substr(0, 2) == "\\{") body.remove_prefix(2);
      while (!body.empty() && (body[0] == ' ' || body[0] == '\t')) body.remove_prefix(1);
      if (!body.empty()) Line(body, number);
      return;
    }
    const int open = BraceBalance(body);
    if (open > 0) skip_braces = open;
  }

  // ------------------------------------------------------------------------ lines
  void Line(std::string_view line, uint32_t number) {
    if (++line_depth > kMaxDepth) {
      --line_depth;
      return;
    }
    LineAt(line, number);
    --line_depth;
  }

  void LineAt(std::string_view line, uint32_t number) {
    if (skip_braces > 0) {  // inside a block of a false condition
      skip_braces += BraceBalance(line);
      return;
    }
    const bool control = !line.empty() && (line[0] == '.' || line[0] == '\'');
    if (!skip_until.empty()) {  // a macro definition or an .ig block
      if (control) {
        size_t i = 1;
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        const std::string_view name = line.substr(i, line.find_first_of(" \t", i) - i);
        if (name == skip_until) {
          skip_until.clear();
          recording = nullptr;
          return;
        }
      }
      if (recording != nullptr && recording->size() < kMaxMacroBytes) {
        recording->append(line).push_back('\n');
      }
      return;
    }
    switch (block) {
      case Block::kEqn:
      case Block::kPic:
        if (control) {
          const std::vector<std::string> a = SplitArgs(line.substr(1));
          if (!a.empty() && a[0] == (block == Block::kEqn ? "EN" : "PE")) block = Block::kNone;
        }
        return;
      case Block::kTblOptions:
      case Block::kTblFormat:
        TblLayout(line);
        return;
      case Block::kTblData:
        if (!control || line.substr(0, 3) == ".T&" || line.substr(0, 3) == ".TE") {
          TblData(line, number);
          return;
        }
        break;
      case Block::kTblText:
        if (line.substr(0, 2) == "T}") {
          block = Block::kTblData;
          TblData(line.substr(2), number);
          return;
        }
        break;
      case Block::kNone:
        break;
    }
    if (control) {
      Request(line, number);
      return;
    }
    bool continued = false;
    const std::string text = Show(line, &continued);
    Emit(text, number, continued);
  }

  // tbl's options (a first line ending in ';') and format lines (the last ends in '.').
  void TblLayout(std::string_view line) {
    std::string_view t = line;
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (block == Block::kTblOptions) {
      block = Block::kTblFormat;
      if (!t.empty() && t.back() == ';') {
        const size_t tab = t.find("tab");
        if (tab != std::string_view::npos) {
          size_t p = tab + 3;
          while (p < t.size() && t[p] == ' ') ++p;
          if (p + 1 < t.size() && t[p] == '(') tbl_tab = t[p + 1];
        }
        return;
      }
    }
    if (!t.empty() && t.back() == '.') block = Block::kTblData;
  }

  // A row of tbl data: its cells, separated by the tab character, on one line.
  void TblData(std::string_view line, uint32_t number) {
    if (line.substr(0, 3) == ".TE") {
      block = Block::kNone;
      return;
    }
    if (line.substr(0, 3) == ".T&") {
      block = Block::kTblFormat;
      return;
    }
    std::string row;
    bool continued = false;
    size_t start = 0;
    while (start <= line.size()) {
      size_t end = line.find(tbl_tab, start);
      if (end == std::string_view::npos) end = line.size();
      std::string_view cell = line.substr(start, end - start);
      if (cell.substr(0, 2) == "T{") {
        const std::string shown = Show(cell.substr(2), &continued);
        if (!shown.empty()) row += (row.empty() ? "" : " ") + shown;
        block = Block::kTblText;
        Emit(row, number, false);
        return;
      }
      if (cell != "_" && cell != "=" && cell != "\\_" && cell != "\\^" && cell != "^" &&
          !(cell.size() == 3 && cell[0] == '\\' && cell[1] == 'R')) {
        const std::string shown = Show(cell, &continued);
        if (!shown.empty()) row += (row.empty() ? "" : " ") + shown;
      }
      start = end + 1;
    }
    Emit(row, number, false);
  }

  void Request(std::string_view line, uint32_t number) {
    size_t i = 1;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i + 1 < line.size() && line[i] == '\\' && (line[i + 1] == '"' || line[i + 1] == '#'))
      return;  // .\" a comment
    size_t name_end = line.find_first_of(" \t", i);
    if (name_end == std::string_view::npos) name_end = line.size();
    std::string name(line.substr(i, name_end - i));
    if (const size_t esc = name.find('\\'); esc != std::string::npos) {
      // ".\}" and the like: escapes with no name before them.
      if (esc == 0) return;
      name.resize(esc);
      name_end = i + esc;
    }
    std::string_view rest = line.substr(name_end);
    while (!rest.empty() && (rest[0] == ' ' || rest[0] == '\t')) rest.remove_prefix(1);
    if (name.empty()) return;

    // Requests whose argument is not split.
    if (name == "if" || name == "ie") {
      std::string_view body;
      const bool value = Condition(rest, &body);
      if (name == "ie") {
        if (else_stack.size() < 64) else_stack.push_back(!value);
      }
      Body(value, body, number);
      return;
    }
    if (name == "el") {
      bool value = false;
      if (!else_stack.empty()) {
        value = else_stack.back();
        else_stack.pop_back();
      }
      Body(value, rest, number);
      return;
    }
    if (name == "ds" || name == "ds1" || name == "as" || name == "as1") {
      size_t e = rest.find_first_of(" \t");
      const std::string key(rest.substr(0, e));
      std::string_view value = e == std::string_view::npos ? std::string_view() : rest.substr(e);
      while (!value.empty() && (value[0] == ' ' || value[0] == '\t')) value.remove_prefix(1);
      if (!value.empty() && value[0] == '"') value.remove_prefix(1);
      if (const size_t c = value.find("\\\""); c != std::string_view::npos)
        value = value.substr(0, c);
      if (key.empty() || (strings.size() >= kMaxStrings && !strings.count(key))) return;
      std::string& s = strings[key];
      if (name[0] == 'd') s.clear();
      s.append(value.substr(0, kMaxStringBytes - std::min(kMaxStringBytes, s.size())));
      return;
    }
    if (name == "tr") {
      const std::string chars = Show(rest);
      std::vector<std::string> cps;
      for (size_t k = 0; k < chars.size();) {
        const size_t n = CharLength(chars, k);
        cps.push_back(chars.substr(k, n));
        k += n;
      }
      for (size_t k = 0; k + 1 < cps.size() && translate.size() < 256; k += 2) {
        if (cps[k] == cps[k + 1]) {
          translate.erase(cps[k]);
        } else {
          translate[cps[k]] = cps[k + 1];
        }
      }
      return;
    }
    if (name == "tl") {
      std::string_view t = rest;
      if (t.empty()) return;
      const char d = t[0];
      std::string o;
      bool continued = false;
      size_t k = 1;
      while (k < t.size()) {
        size_t e = t.find(d, k);
        if (e == std::string_view::npos) e = t.size();
        const std::string part = Show(t.substr(k, e - k), &continued);
        if (!part.empty()) o += (o.empty() ? "" : " ") + part;
        k = e + 1;
      }
      Emit(o, number, false);
      return;
    }

    const std::vector<std::string> a = SplitArgs(rest);
    bool continued = false;
    auto arg = [&](size_t k) { return k < a.size() ? a[k] : std::string(); };

    // Blocks.
    if (name == "de" || name == "de1" || name == "am" || name == "am1" || name == "dei" ||
        name == "ami") {
      skip_until = a.size() > 1 ? a[1] : ".";
      recording = nullptr;
      if (!a.empty() && (macros.size() < kMaxStrings || macros.count(a[0]))) {
        recording = &macros[a[0]];
        if (name[0] == 'd') recording->clear();
      }
      return;
    }
    if (name == "als" && a.size() > 1) {
      if (auto it = macros.find(a[1]); it != macros.end() && macros.size() < kMaxStrings) {
        const std::string body = it->second;
        macros[a[0]] = body;
      }
      return;
    }
    if (name == "rm") {
      for (const std::string& n : a) {
        macros.erase(n);
        strings.erase(n);
      }
      return;
    }
    if (auto it = macros.find(name); it != macros.end()) {
      const std::string body = it->second;  // (a copy: running it may redefine it)
      RunMacro(name, body, a, number);
      return;
    }
    if (name == "ig") {
      skip_until = a.empty() ? "." : a[0];
      return;
    }
    if (name == "TS") {
      block = Block::kTblOptions;
      tbl_tab = '\t';
      return;
    }
    if (name == "EQ") {
      block = Block::kEqn;
      return;
    }
    if (name == "PS") {
      block = Block::kPic;
      return;
    }

    // man(7).
    if (name == "TH") {
      const std::string title = Show(arg(0)), section = Show(arg(1));
      std::string volume = a.size() > 4 ? Show(a[4]) : std::string(VolumeOfSection(section, false));
      std::string head = title + "(" + section + ")";
      if (!volume.empty()) head += " " + volume;
      Emit(head, number, false);
      std::string foot = Show(arg(3));
      const std::string date = Show(arg(2));
      if (!date.empty()) foot += (foot.empty() ? "" : " ") + date;
      Emit(foot, number, false);
      return;
    }
    if (name == "SH" || name == "SS" || name == "B" || name == "I" || name == "SM" ||
        name == "SB") {
      Emit(Joined(a, 0, " ", &continued), number, continued);
      return;
    }
    if (name == "BR" || name == "RB" || name == "BI" || name == "IB" || name == "IR" ||
        name == "RI") {
      Emit(Joined(a, 0, "", &continued), number, continued);
      return;
    }
    if (name == "IP") {
      Emit(Show(arg(0), &continued), number, continued);
      return;
    }
    if (name == "UR" || name == "MT") {
      if (!a.empty()) link = "<" + Show(a[0]) + ">";
      return;
    }
    if (name == "UE" || name == "ME") {
      Emit(link + Joined(a, 0, " ", &continued), number, continued);
      link.clear();
      return;
    }
    if (name == "SY") {
      Emit(Joined(a, 0, " ", &continued), number, continued);
      return;
    }
    if (name == "OP") {
      std::string o = "[" + Show(arg(0));
      if (a.size() > 1) o += " " + Show(a[1]);
      Emit(o + "]", number, false);
      return;
    }
    if (name == "MR") {
      std::string o = Show(arg(0));
      if (a.size() > 1) o += "(" + Show(a[1]) + ")";
      o += Show(arg(2));
      Emit(o, number, false);
      return;
    }

    if (name == "UC" || name == "AT") {  // the footer of old BSD and AT&T pages
      static const char* const kBsd[] = {"3rd Berkeley Distribution", "4th Berkeley Distribution",
                                         "4.2 Berkeley Distribution", "4.3 Berkeley Distribution",
                                         "4.4 Berkeley Distribution"};
      std::string foot;
      const std::string v = arg(0);
      if (name == "UC") {
        foot = kBsd[0];
        if (v.size() == 1 && v[0] >= '3' && v[0] <= '7') foot = kBsd[v[0] - '3'];
      } else {
        foot = v == "3" ? "7th Edition" : v == "4" ? "System III" : "7th Edition";
        if (v == "5") foot = a.size() > 1 ? "System V Release " + Show(a[1]) : "System V";
      }
      Emit(foot, number, false);
      return;
    }

    // mdoc(7), unless the page defines a macro of that name.
    if (!macros.count(name) &&
        (MdocCallable().count(name) || MdocSilent().count(name) || MdocLineOnly().count(name))) {
      Mdoc(name, a, number);
      return;
    }
    // Any other request or macro (.PP, .TP, .br, .sp, .nf, .so, ...) shows nothing.
  }

  // Runs a macro the page defined: each line of its body with the arguments put in
  // (\\$1.., \\$*, \\$@, \\$0, \\n(.$) and each "\\\\" made one backslash, as roff reads
  // a body in copy mode.
  void RunMacro(const std::string& name, const std::string& body,
                const std::vector<std::string>& args, uint32_t number) {
    auto all = [&](bool quoted) {
      std::string o;
      for (size_t k = 0; k < args.size(); ++k) {
        if (k > 0) o += ' ';
        o += quoted ? "\"" + args[k] + "\"" : args[k];
      }
      return o;
    };
    size_t start = 0;
    while (start < body.size() && macro_lines < kMaxMacroLines) {
      size_t end = body.find('\n', start);
      if (end == std::string::npos) end = body.size();
      const std::string_view line = std::string_view(body).substr(start, end - start);
      start = end + 1;
      ++macro_lines;
      std::string run;
      for (size_t i = 0; i < line.size();) {
        if (line[i] != '\\' || i + 1 >= line.size()) {
          run += line[i++];
          continue;
        }
        // "\\" stands for one backslash; "\\$" and "\$" put an argument in.
        size_t j = line[i + 1] == '\\' ? i + 2 : i + 1;
        if (j < line.size() && line[j] == '$') {
          ++j;
          if (j < line.size() && (line[j] == '*' || line[j] == '@')) {
            run += all(line[j] == '@');
            i = j + 1;
          } else if (j < line.size() && line[j] == '0') {
            run += name;
            i = j + 1;
          } else {
            const std::string_view n = NameArg(line, &j);
            const size_t k = static_cast<size_t>(std::atoi(std::string(n).c_str()));
            if (k >= 1 && k <= args.size()) run += args[k - 1];
            i = j;
          }
        } else if (line.substr(i, 6) == "\\\\n(.$" || line.substr(i, 7) == "\\\\n[.$]") {
          run += std::to_string(args.size());
          i += line[i + 3] == '[' ? 7 : 6;
        } else if (j == i + 2) {
          run += '\\';
          i = j;
        } else {
          run.append(line.substr(i, 2));
          i += 2;
        }
      }
      Line(run, number);
    }
  }

  // ------------------------------------------------------------------------ mdoc
  void Mdoc(const std::string& name, const std::vector<std::string>& a, uint32_t number) {
    if (name == "Dd") {
      date = Show(JoinRaw(a));
      if (date.rfind("$Mdocdate:", 0) == 0) {
        date = date.substr(10);
        if (const size_t d = date.rfind('$'); d != std::string::npos) date.resize(d);
        while (!date.empty() && date.front() == ' ') date.erase(0, 1);
        while (!date.empty() && date.back() == ' ') date.pop_back();
      }
      return;
    }
    if (name == "Dt") {
      const std::string title = a.empty() ? "UNTITLED" : Show(a[0]);
      const std::string section = a.size() > 1 ? Show(a[1]) : "";
      std::string head = title + "(" + section + ")";
      const std::string_view volume = VolumeOfSection(section, true);
      if (a.size() > 2 && !a[2].empty() && !(a[2][0] >= '0' && a[2][0] <= '9')) {
        head += " " + Show(a[2]);
      }
      if (!volume.empty()) head += " " + std::string(volume);
      Emit(head, number, false);
      return;
    }
    if (name == "Os") {
      std::string foot = a.empty() ? std::string("BSD") : Show(JoinRaw(a));
      if (!date.empty()) foot += " " + date;
      Emit(foot, number, false);
      return;
    }
    if (name == "Sh" || name == "Ss") {
      bool continued = false;
      Emit(Joined(a, 0, " ", &continued), number, false);
      return;
    }
    if (MdocSilent().count(name) && name != "An") return;
    std::vector<std::string> words;
    words.push_back(name);
    words.insert(words.end(), a.begin(), a.end());
    MdocLine mline;
    MdocWords(words, &mline);
    Emit(mline.text, number, false);
  }

  static std::string JoinRaw(const std::vector<std::string>& a) {
    std::string o;
    for (size_t k = 0; k < a.size(); ++k) o += (k ? " " : "") + a[k];
    return o;
  }

  struct MdocLine {
    std::string text;
    bool no_space = true;  // no space before the next word
  };

  void Word(MdocLine* l, const std::string& w, bool attach = false) {
    if (w.empty()) return;
    if (!l->no_space && !attach && !IsClosingPunct(w)) l->text += ' ';
    l->text += w;
    l->no_space = IsOpeningPunct(w);
  }

  // The words of an mdoc macro line (the first is the line's macro): macros called, text
  // words shown, punctuation attached as mdoc attaches it.
  void MdocWords(const std::vector<std::string>& words, MdocLine* l) {
    const auto& callable = MdocCallable();
    size_t k = 0;
    auto is_macro = [&](size_t j) { return j < words.size() && callable.count(words[j]) > 0; };
    // The text arguments after macro k: up to the next macro.
    auto args_after = [&](size_t j) {
      std::vector<std::string> out;
      for (size_t m = j + 1; m < words.size() && !is_macro(m); ++m) out.push_back(words[m]);
      return out;
    };
    while (k < words.size()) {
      const std::string& w = words[k];
      if (k > 0 && !is_macro(k)) {
        Word(l, Show(w));
        ++k;
        continue;
      }
      const std::vector<std::string> args = args_after(k);
      const size_t next = k + 1 + args.size();
      if (w == "Fl") {
        bool any = false;
        for (const std::string& x : args) {
          if (IsClosingPunct(x) || IsOpeningPunct(x)) {
            Word(l, x);
          } else {
            std::string flag(1, '-');  // (not "-" + ...: GCC 12 warns -Wrestrict on it)
            flag += Show(x);
            Word(l, flag);
            any = true;
          }
        }
        if (!any) Word(l, "-");
        if (!any && next < words.size() && is_macro(next)) l->no_space = false;
      } else if (w == "Xr") {
        std::string o = args.empty() ? "" : Show(args[0]);
        if (args.size() > 1) o += "(" + Show(args[1]) + ")";
        Word(l, o);
        for (size_t m = 2; m < args.size(); ++m) Word(l, Show(args[m]));
      } else if (w == "Ar" && (args.empty() || IsClosingPunct(args[0]))) {
        Word(l, "file");
        Word(l, "...");
        for (const std::string& x : args) Word(l, Show(x));
      } else if (w == "Nm") {
        if (args.empty() || IsClosingPunct(args[0])) {
          Word(l, nm);
          for (const std::string& x : args) Word(l, Show(x));
        } else {
          if (nm.empty()) nm = Show(args[0]);
          for (const std::string& x : args) Word(l, Show(x));
        }
      } else if (w == "Nd") {
        Word(l, "–");
        for (const std::string& x : args) Word(l, Show(x));
      } else if (w == "Ns" || w == "Ap") {
        if (w == "Ap") l->text += '\'';
        l->no_space = true;
        for (const std::string& x : args) Word(l, Show(x));
      } else if (w == "Pf") {
        if (!args.empty()) {
          Word(l, Show(args[0]));
          l->no_space = true;
          for (size_t m = 1; m < args.size(); ++m) Word(l, Show(args[m]));
        }
      } else if (w == "Op" || w == "Pq" || w == "Bq" || w == "Brq" || w == "Dq" || w == "Sq" ||
                 w == "Qq" || w == "Aq" || w == "Ql") {
        static const std::map<std::string, std::pair<std::string, std::string>> kQuotes = {
            {"Op", {"[", "]"}},   {"Pq", {"(", ")"}}, {"Bq", {"[", "]"}},
            {"Brq", {"{", "}"}},  {"Dq", {"“", "”"}}, {"Sq", {"‘", "’"}},
            {"Qq", {"\"", "\""}}, {"Aq", {"⟨", "⟩"}}, {"Ql", {"‘", "’"}}};
        const auto& q = kQuotes.at(w);
        Word(l, q.first);
        l->no_space = true;
        // Everything to the end of the line, but closing punctuation at its end, is enclosed.
        std::vector<std::string> rest(words.begin() + static_cast<long>(k) + 1, words.end());
        size_t tail = rest.size();
        while (tail > 0 && IsClosingPunct(rest[tail - 1])) --tail;
        std::vector<std::string> inner(rest.begin(), rest.begin() + static_cast<long>(tail));
        if (!inner.empty() && mdoc_depth < kMaxDepth) {
          inner.insert(inner.begin(), "No");
          MdocLine sub;
          ++mdoc_depth;
          MdocWords(inner, &sub);
          --mdoc_depth;
          l->text += sub.text;
        }
        l->text += q.second;
        l->no_space = false;
        for (size_t m = tail; m < rest.size(); ++m) Word(l, rest[m]);
        return;
      } else if (w == "Oo" || w == "Po" || w == "Bo" || w == "Bro" || w == "Do" || w == "So" ||
                 w == "Qo" || w == "Ao") {
        static const std::map<std::string, std::string> kOpen = {
            {"Oo", "["}, {"Po", "("}, {"Bo", "["},  {"Bro", "{"},
            {"Do", "“"}, {"So", "‘"}, {"Qo", "\""}, {"Ao", "⟨"}};
        Word(l, kOpen.at(w));
        l->no_space = true;
        for (const std::string& x : args) Word(l, Show(x));
      } else if (w == "Oc" || w == "Pc" || w == "Bc" || w == "Brc" || w == "Dc" || w == "Sc" ||
                 w == "Qc" || w == "Ac") {
        static const std::map<std::string, std::string> kClose = {
            {"Oc", "]"}, {"Pc", ")"}, {"Bc", "]"},  {"Brc", "}"},
            {"Dc", "”"}, {"Sc", "’"}, {"Qc", "\""}, {"Ac", "⟩"}};
        l->text += kClose.at(w);
        l->no_space = false;
        for (const std::string& x : args) Word(l, Show(x));
      } else if (w == "Ux" || w == "Bx" || w == "Nx" || w == "Fx" || w == "Ox" || w == "Bsx" ||
                 w == "Dx" || w == "At") {
        static const std::map<std::string, std::string> kSystems = {
            {"Ux", "UNIX"},    {"Bx", "BSD"},     {"Nx", "NetBSD"},    {"Fx", "FreeBSD"},
            {"Ox", "OpenBSD"}, {"Bsx", "BSD/OS"}, {"Dx", "DragonFly"}, {"At", "AT&T UNIX"}};
        std::string o = kSystems.at(w);
        if (w == "At" && !args.empty() && !IsClosingPunct(args[0])) {
          const std::string v = args[0];
          if (v.size() >= 2 && v[0] == 'v') {
            o = "Version " + v.substr(1) + " " + o;
          } else if (v == "32v") {
            o = "AT&T UNIX v32";
          } else if (v.rfind("III", 0) == 0) {
            o = "AT&T System III UNIX";
          } else if (v.rfind("V", 0) == 0) {
            o = "AT&T System " + v + " UNIX";
          }
          Word(l, o);
          for (size_t m = 1; m < args.size(); ++m) Word(l, Show(args[m]));
        } else if (w == "Bx" && !args.empty() && !IsClosingPunct(args[0])) {
          o = Show(args[0]) + "BSD";
          if (args.size() > 1 && !IsClosingPunct(args[1])) o += "-" + Show(args[1]);
          Word(l, o);
          for (size_t m = args.size() > 1 && !IsClosingPunct(args[1]) ? 2 : 1; m < args.size(); ++m)
            Word(l, Show(args[m]));
        } else {
          Word(l, o);
          for (const std::string& x : args) Word(l, Show(x));
        }
      } else if (w == "St") {
        for (size_t m = 0; m < args.size(); ++m) {
          const auto& standards = Standards();
          auto it = standards.find(args[m]);
          Word(l, m == 0 && it != standards.end() ? std::string(it->second) : Show(args[m]));
        }
      } else if (w == "Ex" || w == "Rv") {
        std::vector<std::string> names;
        for (const std::string& x : args) {
          if (x != "-std") names.push_back(Show(x));
        }
        if (names.empty()) names.push_back(nm);
        std::string list;
        for (size_t m = 0; m < names.size(); ++m) {
          if (m > 0) list += names.size() > 2 ? ", " : " ";
          if (m > 0 && m + 1 == names.size()) list += "and ";
          list += w == "Rv" ? names[m] + "()" : names[m];
        }
        if (w == "Ex") {
          Word(l, "The " + list + (names.size() > 1 ? " utilities exit" : " utility exits") +
                      " 0 on success, and >0 if an error occurs.");
        } else {
          Word(l, "The " + list + (names.size() > 1 ? " functions return" : " function returns") +
                      " the value 0 if successful; otherwise the value -1 is returned and the "
                      "global variable errno is set to indicate the error.");
        }
      } else if (w == "Fn") {
        if (!args.empty()) {
          std::string o = Show(args[0]) + "(";
          for (size_t m = 1; m < args.size(); ++m) {
            if (IsClosingPunct(args[m])) break;
            o += (m > 1 ? ", " : "") + Show(args[m]);
          }
          Word(l, o + ")");
          for (size_t m = 1; m < args.size(); ++m) {
            if (IsClosingPunct(args[m])) Word(l, args[m]);
          }
        }
      } else if (w == "Fo") {
        if (!args.empty()) Word(l, Show(args[0]) + "(");
        l->no_space = true;
        in_fo = true;
        fo_args = 0;
      } else if (w == "Fa" && in_fo) {
        for (const std::string& x : args) {
          if (fo_args++ > 0) l->text += ", ";
          l->text += Show(x);
        }
        l->no_space = false;
      } else if (w == "Fc") {
        l->text += ")";
        l->no_space = false;
        in_fo = false;
        for (const std::string& x : args) Word(l, Show(x));
      } else if (w == "In") {
        Word(l, "#include <" + (args.empty() ? std::string() : Show(args[0])) + ">");
        for (size_t m = 1; m < args.size(); ++m) Word(l, Show(args[m]));
      } else if (w == "Lk") {
        if (args.size() > 1) {
          std::string text;
          for (size_t m = 1; m < args.size(); ++m) text += (m > 1 ? " " : "") + Show(args[m]);
          Word(l, text + ": " + Show(args[0]));
        } else if (!args.empty()) {
          Word(l, Show(args[0]));
        }
      } else if (w == "Bt") {
        Word(l, "is currently in beta test.");
      } else if (w == "Ud") {
        Word(l, "currently under development.");
      } else if (w == "Lb") {
        for (const std::string& x : args) Word(l, Show(x));
      } else if (MdocSilent().count(w) && k == 0) {
        // Options, not text (.Bl -tag -width Ds, .An -nosplit).
        if (w == "An" || w == "Ot") {
          for (const std::string& x : args) {
            if (x.empty() || x[0] != '-') Word(l, Show(x));
          }
        }
      } else {
        // Any other macro: its arguments as text (.Em, .Cm, .Pa, .It, .D1, .No, ...).
        for (const std::string& x : args) Word(l, Show(x));
      }
      k = next;
    }
  }

  // ------------------------------------------------------------------------ state
  enum class Block { kNone, kTblOptions, kTblFormat, kTblData, kTblText, kEqn, kPic };

  ByteSink& out;
  std::vector<uint32_t>* source_lines;
  std::string pending;
  bool at_line_start = true;
  std::map<std::string, std::string> strings;
  std::map<std::string, std::string> macros;  // the macros the page defines: their bodies
  std::string* recording = nullptr;           // the body a definition being read goes to
  size_t macro_lines = 0;                     // lines run from macros so far
  size_t expand_steps = 0;                    // escapes interpreted for the current line
  std::map<std::string, std::string> translate;
  std::vector<bool> else_stack;
  int skip_braces = 0;
  std::string skip_until;
  Block block = Block::kNone;
  char tbl_tab = '\t';
  int line_depth = 0;
  std::string link;  // an .UR or .MT address, shown at its .UE or .ME
  // mdoc
  std::string nm, date;  // the page's name (its first .Nm) and date (.Dd)
  int mdoc_depth = 0;
  bool in_fo = false;
  int fo_args = 0;
};

bool IsManPageName(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // A section suffix: ".1".."9", ".n", ".l", optionally letters after it, or ".man".
  const size_t dot = name.rfind('.');
  if (dot != std::string_view::npos && dot > 0) {
    const std::string_view ext = name.substr(dot + 1);
    if (ext == "man") return true;
    if (!ext.empty() && ext.size() <= 8 &&
        ((ext[0] >= '1' && ext[0] <= '9') || ext[0] == 'n' || ext[0] == 'l')) {
      const bool letters = std::all_of(ext.begin() + 1, ext.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      });
      // The end of a version number is no section: "libfoo.so.1.2" (but "bzip2.1" is).
      const std::string_view stem = name.substr(0, dot);
      const size_t stem_dot = stem.rfind('.');
      const std::string_view before =
          stem_dot == std::string_view::npos ? std::string_view() : stem.substr(stem_dot + 1);
      const bool version = !before.empty() && std::all_of(before.begin(), before.end(), [](char c) {
        return c >= '0' && c <= '9';
      });
      if (letters && !version && (ext.size() == 1 || (ext[0] >= '1' && ext[0] <= '9'))) {
        return true;
      }
    }
  }
  // A directory man1..man9, mann, manl (and their suffixed forms, man3p).
  if (slash == std::string_view::npos) return false;
  const std::string_view dir = path.substr(0, slash);
  const size_t up = dir.rfind('/');
  const std::string_view last = up == std::string_view::npos ? dir : dir.substr(up + 1);
  return last.size() >= 4 && last.substr(0, 3) == "man" &&
         ((last[3] >= '1' && last[3] <= '9') || last[3] == 'n' || last[3] == 'l');
}

RoffVerdict LooksLikeRoff(std::string_view text, bool complete) {
  size_t at = 0;
  // A byte-order mark is dropped by the decoder; blank lines are skipped.
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const std::string_view line =
        text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    const size_t first = line.find_first_not_of(" \t\r\f");
    if (first != std::string_view::npos) {
      const char c = line[first];
      if (first == 0 && (c == '.' || c == '\'')) return RoffVerdict::kRoff;
      // A comment escape at the start of a text line (some pages open with one).
      if (first == 0 && line.substr(0, 2) == "\\\"") return RoffVerdict::kRoff;
      return RoffVerdict::kNotRoff;
    }
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return complete || text.size() >= kRoffSniffBytes ? RoffVerdict::kNotRoff : RoffVerdict::kUnknown;
}

RoffToText::RoffToText(ByteSink& out, std::vector<uint32_t>* source_lines, bool sniff)
    : out_(out), source_lines_(source_lines) {
  if (!sniff) {
    verdict_ = RoffVerdict::kRoff;
    converter_ = std::make_unique<Converter>(out_, source_lines_);
  }
}

RoffToText::~RoffToText() = default;

bool RoffToText::is_roff() const { return verdict_ == RoffVerdict::kRoff; }

void RoffToText::Decide(bool complete) {
  verdict_ = LooksLikeRoff(held_, complete);
  if (verdict_ == RoffVerdict::kRoff) {
    converter_ = std::make_unique<Converter>(out_, source_lines_);
    std::string held;
    held.swap(held_);
    Feed(held);
  } else if (verdict_ == RoffVerdict::kNotRoff) {
    if (!held_.empty()) out_.Write(held_);
    held_.clear();
  }
}

void RoffToText::Write(std::string_view utf8) {
  if (verdict_ == RoffVerdict::kNotRoff) {
    out_.Write(utf8);
    return;
  }
  if (verdict_ == RoffVerdict::kUnknown) {
    held_.append(utf8);
    Decide(false);
    return;
  }
  Feed(utf8);
}

// Feeds complete source lines to the converter; a line's end may arrive in a later write. A line
// ending in an escaped newline ('\' at its end) goes on with the next line.
void RoffToText::Feed(std::string_view utf8) {
  Converter& c = *converter_;
  std::string_view data = utf8;
  std::string joined;
  if (!held_.empty()) {
    joined = std::move(held_);
    held_.clear();
    joined.append(utf8);
    data = joined;
  }
  size_t at = 0;
  std::string logical;
  while (at < data.size()) {
    const size_t nl = data.find('\n', at);
    if (nl == std::string_view::npos) break;
    std::string_view line = data.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    at = nl + 1;
    ++line_number_;
    // An odd number of backslashes at the end escapes the newline.
    size_t backslashes = 0;
    while (backslashes < line.size() && line[line.size() - 1 - backslashes] == '\\') ++backslashes;
    if (logical_.empty()) logical_start_ = line_number_;
    if (backslashes % 2 == 1 && logical_.size() < kMaxLineBytes) {
      logical_.append(line.substr(0, line.size() - 1));
      continue;
    }
    logical_.append(line);
    c.Line(logical_, logical_start_);
    logical_.clear();
  }
  held_.assign(data.substr(at));
  if (held_.size() > kMaxLineBytes) {  // a line without end: converted as it is
    ++line_number_;
    if (logical_.empty()) logical_start_ = line_number_;
    logical_.append(held_);
    c.Line(logical_, logical_start_);
    logical_.clear();
    held_.clear();
    --line_number_;  // (its end, when it comes, is counted then)
  }
  c.Flush();
}

void RoffToText::Close() {
  if (verdict_ == RoffVerdict::kUnknown) Decide(true);
  if (verdict_ == RoffVerdict::kRoff) {
    if (!held_.empty()) Feed("\n");
    if (!logical_.empty()) {
      converter_->Line(logical_, logical_start_);
      logical_.clear();
    }
    converter_->Finish();
  }
  out_.Close();
}

std::string RoffText(std::string_view utf8, std::vector<uint32_t>* source_lines) {
  StringSink sink;
  RoffToText r(sink, source_lines, /*sniff=*/false);
  r.Write(utf8);
  r.Close();
  return std::move(sink.text);
}

}  // namespace bitsift::documents
