// Texts in many languages, written for these tests, with the legacy encodings people keep
// them in. The encoded bytes are made at test time with ICU (no binary fixtures).
#ifndef BITSIFT_TESTS_DOCUMENTS_SAMPLE_TEXTS_H_
#define BITSIFT_TESTS_DOCUMENTS_SAMPLE_TEXTS_H_

#include <unicode/ucnv.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace bitsift::testing {

struct SampleText {
  const char* language;
  const char* text;                    // UTF-8
  std::vector<const char*> encodings;  // ICU converter names it is kept in
  std::vector<const char*> words;      // words a user would search for
};

inline const std::vector<SampleText>& SampleTexts() {
  static const std::vector<SampleText> kTexts = {
      {"zh-Hans",
       "布隆过滤器是一种空间效率很高的概率数据结构，用来判断一个元素是否在一个集合中。"
       "它可能会出现误判，但是不会漏判。搜索引擎在建立索引的时候，经常使用这种数据结构来"
       "减少磁盘的读取次数。我们的程序把每一个文档变成一组词语，然后计算它们的签名，"
       "最后把签名按位存储在文件里面。查询的时候，只需要读取少量的行就可以找到候选文档。"
       "这个方法简单而且快速，适合在普通的电脑上处理大量的文本资料。",
       {"GB18030", "GBK"},
       {"布隆过滤器", "搜索引擎", "数据结构"}},
      {"zh-Hant",
       "布隆過濾器是一種空間效率很高的機率資料結構，用來判斷一個元素是否在一個集合中。"
       "它可能會出現誤判，但是不會漏判。搜尋引擎在建立索引的時候，經常使用這種資料結構來"
       "減少磁碟的讀取次數。我們的程式把每一個文件變成一組詞語，然後計算它們的簽名，"
       "最後把簽名按位元儲存在檔案裡面。查詢的時候，只需要讀取少量的列就可以找到候選文件。",
       {"Big5"},
       {"布隆過濾器", "搜尋引擎", "資料結構"}},
      {"ja",
       "ブルームフィルタは、ある要素が集合に含まれているかどうかを調べるための確率的な"
       "データ構造です。偽陽性はありますが、偽陰性はありません。検索エンジンは索引を作る"
       "ときに、このような仕組みを使ってディスクの読み込みを減らします。私たちのプログラムは"
       "文書を単語の集まりに変えて、その署名を計算し、ファイルに保存します。東京の図書館で"
       "古い新聞を探すときにも、同じような考え方が役に立つでしょう。",
       {"Shift_JIS", "EUC-JP", "ISO-2022-JP"},
       {"ブルームフィルタ", "検索エンジン", "東京"}},
      {"ko",
       "블룸 필터는 어떤 원소가 집합에 속하는지 검사하는 확률적인 자료 구조입니다. "
       "거짓 양성은 있을 수 있지만 거짓 음성은 없습니다. 검색 엔진은 색인을 만들 때 "
       "디스크 읽기를 줄이기 위해 이런 구조를 자주 사용합니다. 우리 프로그램은 문서를 "
       "단어의 집합으로 바꾸고 서명을 계산한 다음 파일에 저장합니다. 서울의 도서관에서 "
       "오래된 신문을 찾을 때에도 비슷한 생각이 도움이 됩니다.",
       {"EUC-KR"},
       {"필터는", "검색", "서울의"}},
      {"ru",
       "Фильтр Блума - это вероятностная структура данных, которая позволяет проверить, "
       "принадлежит ли элемент множеству. Ложные срабатывания возможны, а ложные пропуски нет. "
       "Поисковые системы используют такие структуры, чтобы реже читать диск при построении "
       "индекса. Наша программа превращает каждый документ в набор слов, вычисляет их подписи "
       "и сохраняет их в файле. Москва и Санкт-Петербург славятся своими старыми библиотеками.",
       {"KOI8-R", "windows-1251", "ISO-8859-5"},
       {"фильтр", "библиотеками", "Москва"}},
      {"fr",
       "Le filtre de Bloom est une structure de données probabiliste qui permet de savoir si un "
       "élément appartient à un ensemble. Les faux positifs sont possibles, mais jamais les "
       "faux négatifs. Les moteurs de recherche s’en servent pour lire moins souvent le disque "
       "pendant la création de l’index. Notre programme transforme chaque document en un "
       "ensemble de mots, calcule leur signature et l’enregistre dans un fichier. « Voilà », "
       "dit-elle, « ça coûte à peine 5 € par mois ».",
       {"windows-1252"},
       {"données", "élément", "négatifs"}},
      {"de",
       "Ein Bloom-Filter ist eine probabilistische Datenstruktur, mit der man prüfen kann, ob "
       "ein Element zu einer Menge gehört. Falsch positive Ergebnisse sind möglich, falsch "
       "negative dagegen nicht. Suchmaschinen verwenden solche Strukturen, um beim Aufbau des "
       "Index seltener von der Festplatte zu lesen. Unser Programm verwandelt jedes Dokument in "
       "eine Menge von Wörtern, berechnet ihre Signatur und speichert sie in einer Datei. Die "
       "Straße vor der Bücherei ist im Frühling besonders schön.",
       {"ISO-8859-1", "windows-1252"},
       {"prüfen", "Bücherei", "Frühling"}},
      {"pl",
       "Filtr Blooma to probabilistyczna struktura danych, która pozwala sprawdzić, czy element "
       "należy do zbioru. Fałszywe alarmy są możliwe, ale fałszywe pominięcia nie występują. "
       "Wyszukiwarki używają takich struktur, żeby rzadziej czytać dysk podczas budowania "
       "indeksu. Nasz program zamienia każdy dokument w zbiór słów, oblicza ich podpis i "
       "zapisuje go w pliku. Zażółć gęślą jaźń, mówi stary przykład z Łodzi i Gdańska.",
       {"ISO-8859-2", "windows-1250"},
       {"należy", "Łodzi", "Gdańska"}},
      {"cs",
       "Bloomův filtr je pravděpodobnostní datová struktura, která umožňuje zjistit, zda prvek "
       "patří do množiny. Falešně pozitivní výsledky jsou možné, falešně negativní nikoli. "
       "Vyhledávače používají takové struktury, aby při stavbě indexu méně často četly disk. "
       "Náš program převede každý dokument na množinu slov, spočítá jejich podpis a uloží jej "
       "do souboru. Příliš žluťoučký kůň úpěl ďábelské ódy v Českých Budějovicích.",
       {"ISO-8859-2", "windows-1250"},
       {"množiny", "žluťoučký", "Budějovicích"}},
      {"el",
       "Το φίλτρο Bloom είναι μια πιθανοτική δομή δεδομένων που επιτρέπει να ελέγξουμε αν ένα "
       "στοιχείο ανήκει σε ένα σύνολο. Τα ψευδώς θετικά είναι δυνατά, τα ψευδώς αρνητικά όχι. "
       "Οι μηχανές αναζήτησης χρησιμοποιούν τέτοιες δομές για να διαβάζουν λιγότερο τον δίσκο. "
       "Το πρόγραμμά μας μετατρέπει κάθε έγγραφο σε ένα σύνολο λέξεων και υπολογίζει την "
       "υπογραφή του. Η Αθήνα και η Θεσσαλονίκη έχουν παλιές βιβλιοθήκες.",
       {"ISO-8859-7"},
       {"φίλτρο", "Αθήνα", "βιβλιοθήκες"}},
      {"he",
       "מסנן בלום הוא מבנה נתונים הסתברותי שמאפשר לבדוק אם איבר שייך לקבוצה. תוצאות חיוביות "
       "שגויות אפשריות, אבל תוצאות שליליות שגויות אינן אפשריות. מנועי חיפוש משתמשים במבנים "
       "כאלה כדי לקרוא פחות מהדיסק בזמן בניית האינדקס. התוכנית שלנו הופכת כל מסמך לקבוצה של "
       "מילים, מחשבת את החתימה שלהן ושומרת אותה בקובץ. בירושלים ובתל אביב יש ספריות ישנות.",
       {"ISO-8859-8", "windows-1255"},
       {"מסנן", "בירושלים", "ספריות"}},
      {"tr",
       "Bloom filtresi, bir öğenin bir kümeye ait olup olmadığını anlamaya yarayan olasılıksal "
       "bir veri yapısıdır. Yanlış pozitif sonuçlar mümkündür, ama yanlış negatif sonuçlar "
       "olmaz. Arama motorları dizin oluştururken diski daha az okumak için bu tür yapıları "
       "kullanır. Programımız her belgeyi bir sözcük kümesine dönüştürür, imzasını hesaplar ve "
       "bir dosyaya kaydeder. İstanbul'daki eski kütüphanelerde çok değerli kitaplar vardır.",
       {"ISO-8859-9", "windows-1254"},
       {"öğenin", "kütüphanelerde", "değerli"}},
      {"ar",
       "مرشح بلوم هو بنية بيانات احتمالية تسمح بمعرفة ما إذا كان عنصر ما ينتمي إلى مجموعة. "
       "النتائج الإيجابية الخاطئة ممكنة، أما النتائج السلبية الخاطئة فغير ممكنة. تستخدم محركات "
       "البحث مثل هذه البنى لتقليل القراءة من القرص عند بناء الفهرس. يحول برنامجنا كل وثيقة إلى "
       "مجموعة من الكلمات ويحسب توقيعها ويحفظه في ملف. في القاهرة ودمشق مكتبات قديمة جدا.",
       {"windows-1256", "ISO-8859-6"},
       {"مرشح", "القاهرة", "مكتبات"}},
  };
  return kTexts;
}

// `text` repeated until it is at least min_bytes long (separated by newlines).
inline std::string Repeat(const std::string& text, size_t min_bytes) {
  std::string out;
  while (out.size() < min_bytes) out += text + "\n";
  return out;
}

// UTF-8 text converted to `encoding` with ICU. Throws if a character cannot be represented.
inline std::string Encode(const std::string& utf8, const char* encoding) {
  UErrorCode err = U_ZERO_ERROR;
  UConverter* from = ucnv_open("UTF-8", &err);
  UConverter* to = ucnv_open(encoding, &err);
  if (U_FAILURE(err)) throw std::runtime_error(std::string("no converter ") + encoding);
  ucnv_setFromUCallBack(to, UCNV_FROM_U_CALLBACK_STOP, nullptr, nullptr, nullptr, &err);
  std::string out(utf8.size() * 4 + 16, '\0');
  char* target = out.data();
  const char* source = utf8.data();
  ucnv_convertEx(to, from, &target, out.data() + out.size(), &source, source + utf8.size(), nullptr,
                 nullptr, nullptr, nullptr, true, true, &err);
  ucnv_close(from);
  ucnv_close(to);
  if (U_FAILURE(err)) {
    throw std::runtime_error(std::string("cannot encode in ") + encoding + ": " + u_errorName(err));
  }
  out.resize(target - out.data());
  return out;
}

}  // namespace bitsift::testing

#endif  // BITSIFT_TESTS_DOCUMENTS_SAMPLE_TEXTS_H_
