// Man pages to the text `man` shows (documents/roff.h): escapes, requests and macros, comments,
// conditions, strings, tables, mdoc, the source line of each output line, and the rule that
// decides which files are man pages.
#include "documents/roff.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "documents/stage.h"

using bitsift::documents::IsManPageName;
using bitsift::documents::LooksLikeRoff;
using bitsift::documents::RoffText;
using bitsift::documents::RoffToText;
using bitsift::documents::RoffVerdict;
using bitsift::documents::StringSink;

TEST_CASE("roff font escapes give no letters", "[documents][roff]") {
  CHECK(RoffText("\\fBgrep\\fR finds\n") == "grep finds\n");
  CHECK(RoffText("\\fIa\\fPb \\f(CWc\\fR \\f[CB]d\\f[]\n") == "ab c d\n");
  CHECK(RoffText("Tail\\fBbold\\fRmix\n") == "Tailboldmix\n");
  CHECK(RoffText("\\f1one\\f2two\\f3\n") == "onetwo\n");
}

TEST_CASE("roff special characters and escapes", "[documents][roff]") {
  CHECK(RoffText("a\\(emb\n") == "a—b\n");
  CHECK(RoffText("\\-\\-colour \\(hy \\e \\\\ \\&.x\n") == "--colour - \\ \\ .x\n");
  CHECK(RoffText("\\(lqq\\(rq \\(aqs\\(aq \\[u00E9]t\\['e]\n") == "“q” 's' été\n");
  CHECK(RoffText("caf\\(:a \\[char65] \\N'66'\n") == "cafä A B\n");
  CHECK(RoffText("non\\ breaking\\~space \\0x\n") == "non breaking space  x\n");
  CHECK(RoffText("\\s-2small\\s0 \\s+2big\\s0 \\s10ten\n") == "small big ten\n");
  CHECK(RoffText("a\\h'1m'b\\v'-1'c \\%hy\\:ph\\|en\\^ed\n") == "abc hyphened\n");
  CHECK(RoffText("\\*(lqstring\\*(rq \\*R\n") == "“string” ®\n");
  CHECK(RoffText("unknown \\qescape\n") == "unknown qescape\n");
}

TEST_CASE("roff comments give nothing", "[documents][roff]") {
  CHECK(RoffText(".\\\" a comment line\ntext\n") == "text\n");
  CHECK(RoffText("'\\\" t\ntext\n") == "text\n");
  CHECK(RoffText("text \\\" a trailing comment\n") == "text \n");
  CHECK(RoffText(".TH X 1 \\\" comment\n").find("comment") == std::string::npos);
  CHECK(RoffText("a\\#comment\nb\n") == "a\nb\n");
  CHECK(RoffText(".ig\nhidden\n..\nshown\n") == "shown\n");
}

TEST_CASE("roff requests and macros give their text, not their names", "[documents][roff]") {
  CHECK(RoffText(".SH NAME\ngrep \\- print\n") == "NAME\ngrep - print\n");
  CHECK(RoffText(".SH \"SEE ALSO\"\n") == "SEE ALSO\n");
  CHECK(RoffText(".B bold words\n.I italic\n") == "bold words\nitalic\n");
  CHECK(RoffText(".BR ls (1),\n") == "ls(1),\n");
  CHECK(RoffText(".IR file .txt\n") == "file.txt\n");
  CHECK(RoffText(".IP \\(bu 4\nitem\n") == "·\nitem\n");
  CHECK(RoffText(".TP\n.B \\-v\nverbose\n") == "-v\nverbose\n");
  CHECK(RoffText(".PP\n.br\n.sp 2\n.nf\n.fi\n.RS 4\n.RE\n.ad l\n.nh\n.so man1/x.1\n").empty());
  CHECK(RoffText(".TH GREP 1 2019-12-29 \"GNU grep 3.8\" \"User Commands\"\n") ==
        "GREP(1) User Commands\nGNU grep 3.8 2019-12-29\n");
  CHECK(RoffText(".TH LS 1\n") == "LS(1) General Commands Manual\n");
  CHECK(RoffText(".B \"quoted \"\"arg\"\"\"\n") == "quoted \"arg\"\n");
  CHECK(RoffText(".UR https://example.org\nsite\n.UE .\n") == "site\n<https://example.org>.\n");
  CHECK(RoffText(".MR grep 1 ,\n") == "grep(1),\n");
  CHECK(RoffText(".OP \\-f file\n") == "[-f file]\n");
}

TEST_CASE("roff continuation, joined lines, conditions, strings and macros", "[documents][roff]") {
  CHECK(RoffText("one \\\ntwo\n") == "one two\n");
  CHECK(RoffText("\\fBjoin\\fR\\c\ned\n") == "joined\n");
  CHECK(RoffText(".if n shown\n.if t hidden\n.if !t shown2\n") == "shown\nshown2\n");
  CHECK(RoffText(".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\nit\\*(Aqs\n") == "it's\n");
  CHECK(RoffText(".if t \\{\\\nhidden\n.B hidden\n.\\}\nafter\n") == "after\n");
  CHECK(RoffText(".if n \\{\\\nshown\n.\\}\n") == "shown\n");
  CHECK(RoffText(".if '\\*(.T'utf8' x\n.if 'a'a' same\n") == "same\n");
  CHECK(RoffText(".ds Nm finder\n\\*(Nm and \\*[Nm]\n") == "finder and finder\n");
  CHECK(RoffText(".de XX\n\\fI\\\\$2\\fP <\\\\$1>\\\\$3\n..\n.XX url text .\n") == "text <url>.\n");
  CHECK(RoffText(".de IX\n..\n.IX Header \"NAME\"\nkept\n") == "kept\n");
  CHECK(RoffText(".tr ~-\na~b\n") == "a-b\n");
}

TEST_CASE("roff tables give their cells", "[documents][roff]") {
  const std::string tbl =
      ".TS\ntab(;);\nl l.\nName;Value\n_\nalpha;beta\nT{\nlong text\nT};end\n.TE\nafter\n";
  CHECK(RoffText(tbl) == "Name Value\nalpha beta\nlong text\nend\nafter\n");
  CHECK(RoffText(".EQ\nx sup 2\n.EN\nafter\n") == "after\n");
}

TEST_CASE("mdoc macros give what mandoc and groff show", "[documents][roff]") {
  CHECK(RoffText(".Dd March 1, 2020\n.Dt LS 1\n.Os\n") ==
        "LS(1) General Commands Manual\nBSD March 1, 2020\n");
  CHECK(RoffText(".Nm ls\n.Nd list\n") == "ls\n– list\n");
  CHECK(RoffText(".Nm ls\n.Nm\n") == "ls\nls\n");
  CHECK(RoffText(".Fl v Ar file\n") == "-v file\n");
  CHECK(RoffText(".Op Fl a\n") == "[-a]\n");
  CHECK(RoffText(".Xr grep 1 ,\n") == "grep(1),\n");
  CHECK(RoffText(".Ar name Ns Ar .txt\n") == "name.txt\n");
  CHECK(RoffText(".Dq quoted words .\n") == "“quoted words”.\n");
  CHECK(RoffText(".Bl -tag -width Ds\n.It Fl x\nitem\n.El\n") == "-x\nitem\n");
  CHECK(RoffText(".Nm tool\n.Ex -std\n") ==
        "tool\nThe tool utility exits 0 on success, and >0 if an error occurs.\n");
  CHECK(RoffText(".Fn open \"const char *path\" \"int flags\"\n") ==
        "open(const char *path, int flags)\n");
  CHECK(RoffText(".In stdio.h\n") == "#include <stdio.h>\n");
  CHECK(RoffText(".%T \"A Title\"\n") == "A Title\n");
}

TEST_CASE("each output line knows its source line", "[documents][roff][lines]") {
  std::vector<uint32_t> lines;
  const std::string text =
      RoffText(".\\\" comment\n.TH X 1\n.SH NAME\nx \\- y\n.PP\none \\\ntwo\n\n.B last\n", &lines);
  CHECK(text == "X(1) General Commands Manual\nNAME\nx - y\none two\nlast\n");
  CHECK(lines == std::vector<uint32_t>{2, 3, 4, 6, 9});
}

TEST_CASE("roff in any pieces gives the same text and lines", "[documents][roff]") {
  const std::string page =
      ".TH A 1\n.SH NAME\n\\fBa\\fR \\- b\\\nc\n.BR x (1)\n.if t \\{\\\nno\n.\\}\nend\n";
  std::vector<uint32_t> whole_lines;
  const std::string whole = RoffText(page, &whole_lines);
  for (size_t piece : {1, 2, 3, 7, 64}) {
    StringSink sink;
    std::vector<uint32_t> lines;
    RoffToText r(sink, &lines);
    for (size_t i = 0; i < page.size(); i += piece) r.Write(page.substr(i, piece));
    r.Close();
    CHECK(r.is_roff());
    CHECK(sink.text == whole);
    CHECK(lines == whole_lines);
    CHECK(sink.closed);
  }
}

TEST_CASE("which files are man pages", "[documents][roff]") {
  CHECK(IsManPageName("man1/grep.1"));
  CHECK(IsManPageName("grep.1"));
  CHECK(IsManPageName("x/openssl.1ssl"));
  CHECK(IsManPageName("perl/Foo::Bar.3pm"));
  CHECK(IsManPageName("tcl/after.n"));
  CHECK(IsManPageName("bzip2.1"));
  CHECK(IsManPageName("doc/tool.man"));
  CHECK(IsManPageName("share/man/man8/README"));
  CHECK(IsManPageName("share/man/man3p/page"));
  CHECK_FALSE(IsManPageName("notes.txt"));
  CHECK_FALSE(IsManPageName("libfoo.so.1.2"));
  CHECK_FALSE(IsManPageName("v2.0"));
  CHECK_FALSE(IsManPageName("manual/page.txt"));
  CHECK(LooksLikeRoff(".TH X 1\n", true) == RoffVerdict::kRoff);
  CHECK(LooksLikeRoff("\n\n.\\\" comment\n", true) == RoffVerdict::kRoff);
  CHECK(LooksLikeRoff("'\\\" t\n", true) == RoffVerdict::kRoff);
  CHECK(LooksLikeRoff("\\\"a comment\n.TH X 1\n", true) == RoffVerdict::kRoff);
  CHECK(LooksLikeRoff("\n\n", false) == RoffVerdict::kUnknown);
  CHECK(LooksLikeRoff("\n\n", true) == RoffVerdict::kNotRoff);
  CHECK(LooksLikeRoff("Plain text.\n.TH\n", false) == RoffVerdict::kNotRoff);
  CHECK(LooksLikeRoff(" .TH indented\n", true) == RoffVerdict::kNotRoff);
  // Text that is not roff passes through unchanged.
  StringSink sink;
  RoffToText r(sink);
  r.Write("plain \\fBtext\\fR\n");
  r.Close();
  CHECK_FALSE(r.is_roff());
  CHECK(sink.text == "plain \\fBtext\\fR\n");
}

TEST_CASE("hostile roff stays bounded", "[documents][roff]") {
  // Strings and macros that expand into themselves, deep conditions.
  CHECK_NOTHROW(RoffText(".ds a \\*a\\*a\n\\*a\n"));
  CHECK_NOTHROW(RoffText(".ds a \\*b\\*b\\*b\n.ds b \\*c\\*c\\*c\n.ds c \\*a\\*a\\*a\n\\*a\n"));
  CHECK_NOTHROW(RoffText(".de a\n.a\n.a\n.a\n..\n.a\n"));
  CHECK_NOTHROW(RoffText(std::string(100000, '\\') + "\n"));
  CHECK_NOTHROW(RoffText(".Op " + std::string(20000, 'O') + "\n"));
  std::string deep = ".Op";
  for (int i = 0; i < 5000; ++i) deep += " Op";
  CHECK_NOTHROW(RoffText(deep + " x\n"));
  CHECK_NOTHROW(RoffText(".if \\n(((((((((((((((((((((((((((((((1 x\n"));
}
