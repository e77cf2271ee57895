/*
 * The project's only C++: parses TOML with toml++ and hands the result to
 * C as a cJSON tree plus a side table of source positions (see toml.h).
 *
 * toml++ throws (parse errors, std::bad_alloc) and so may the standard
 * library; every function called from C catches everything, so no
 * exception ever unwinds into C frames.
 */
#include "toml.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tomlpp.h"

/* util.h is a C header without linkage guards of its own. */
extern "C" {
#include "util.h"
}

namespace {

struct item_info {
	toml::source_position pos;
	toml::source_position key_pos;	/* line 0: the item has no key */
	enum toml_type type;
	std::string text;	/* an integer's exact decimal spelling */
};

/* A string or key holding a NUL, which a C string would cut short. */
struct nul_error {
	toml::source_position pos;
};

using json_ptr = std::unique_ptr<cJSON, decltype(&cJSON_Delete)>;
using file_ptr = std::unique_ptr<FILE, decltype(&fclose)>;

}

struct toml_doc {
	cJSON *root = nullptr;
	/* Keyed by the items of root: every value has an entry. */
	std::unordered_map<const cJSON *, item_info> info;

	~toml_doc() { cJSON_Delete(root); }
};

/* cJSON reports allocation failure as NULL; turn it into the C++ way. */
static cJSON *
checked(cJSON *item)
{
	if (item == nullptr)
		throw std::bad_alloc();
	return item;
}

static void
check_nul(std::string_view s, const toml::source_position &pos)
{
	if (s.find('\0') != std::string_view::npos)
		throw nul_error{ pos };
}

/* Dates and times keep their TOML spelling, e.g. 1979-05-27T07:32:00Z. */
template <typename T>
static cJSON *
create_text(const T &value)
{
	std::ostringstream out;

	out << value;
	return checked(cJSON_CreateString(out.str().c_str()));
}

static json_ptr convert(toml_doc &doc, const toml::node &node);

/*
 * toml::table is ordered by key; members are added in the order their
 * keys appear in the file instead, so that callers can keep file order
 * (hosts are listed and selected in the order the user wrote them).
 */
static void
add_members(toml_doc &doc, cJSON *object, const toml::table &table)
{
	std::vector<std::pair<const toml::key *, const toml::node *>> members;

	for (auto &&[key, node] : table)
		members.emplace_back(&key, &node);
	std::sort(members.begin(), members.end(), [](auto &a, auto &b) {
		const toml::source_position &pa = a.first->source().begin;
		const toml::source_position &pb = b.first->source().begin;

		return std::tie(pa.line, pa.column) <
		    std::tie(pb.line, pb.column);
	});
	for (auto &[key, node] : members) {
		std::string name(key->str());

		check_nul(name, key->source().begin);
		json_ptr child = convert(doc, *node);
		cJSON *raw = child.get();

		if (!cJSON_AddItemToObject(object, name.c_str(), raw))
			throw std::bad_alloc();
		child.release();
		doc.info[raw].key_pos = key->source().begin;
	}
}

static json_ptr
convert(toml_doc &doc, const toml::node &node)
{
	json_ptr item(nullptr, cJSON_Delete);
	enum toml_type type;

	if (const toml::table *table = node.as_table()) {
		type = TOML_TABLE;
		item.reset(checked(cJSON_CreateObject()));
		add_members(doc, item.get(), *table);
	} else if (const toml::array *array = node.as_array()) {
		type = TOML_ARRAY;
		item.reset(checked(cJSON_CreateArray()));
		for (const toml::node &elem : *array) {
			json_ptr child = convert(doc, elem);

			if (!cJSON_AddItemToArray(item.get(), child.get()))
				throw std::bad_alloc();
			child.release();
		}
	} else if (const toml::value<std::string> *s = node.as_string()) {
		type = TOML_STRING;
		check_nul(s->get(), node.source().begin);
		item.reset(checked(cJSON_CreateString(s->get().c_str())));
	} else if (const toml::value<int64_t> *i = node.as_integer()) {
		/* Exact up to 2^53, plenty for ports, CPUs and timeouts. */
		type = TOML_INTEGER;
		item.reset(checked(cJSON_CreateNumber(
		    static_cast<double>(i->get()))));
		doc.info[item.get()] = item_info{ node.source().begin, {},
		    type, std::to_string(i->get()) };
		return item;
	} else if (const toml::value<double> *f = node.as_floating_point()) {
		type = TOML_FLOAT;
		item.reset(checked(cJSON_CreateNumber(f->get())));
	} else if (const toml::value<bool> *b = node.as_boolean()) {
		type = TOML_BOOLEAN;
		item.reset(checked(cJSON_CreateBool(b->get())));
	} else if (const toml::value<toml::date> *d = node.as_date()) {
		type = TOML_DATE;
		item.reset(create_text(d->get()));
	} else if (const toml::value<toml::time> *t = node.as_time()) {
		type = TOML_TIME;
		item.reset(create_text(t->get()));
	} else {
		type = TOML_DATE_TIME;
		item.reset(create_text(node.as_date_time()->get()));
	}
	doc.info[item.get()] = item_info{ node.source().begin, {}, type, {} };
	return item;
}

static int
parse_failed(const char *name, const toml::parse_error &e,
    struct so_err *err)
{
	const toml::source_position &pos = e.source().begin;
	std::string what(e.description());

	/* toml++ capitalises its descriptions; seqorch's are lowercase. */
	if (!what.empty())
		what[0] = static_cast<char>(
		    std::tolower(static_cast<unsigned char>(what[0])));
	return so_error(err, SO_EPARSE, "%s:%u:%u: %s", name,
	    static_cast<unsigned>(pos.line),
	    static_cast<unsigned>(pos.column), what.c_str());
}

/*
 * TOML allows non-ASCII text only in strings and comments, and control
 * characters nowhere; such bytes are refused here first, naming the place
 * (toml++'s own errors for them vary with where its scanner stood), as is
 * a non-ASCII character starting the text after a line-ending backslash
 * of a multi-line string (which toml++ trims as whitespace).  Returns the
 * offset of the offending byte, or len.
 */
static size_t
refused_early(const char *t, size_t len)
{
	size_t i = 0, j;
	bool bol = true;	/* only blanks since the line began */

	while (i < len) {
		unsigned char c = static_cast<unsigned char>(t[i]);
		bool multi = len - i >= 3 && (t[i + 1] == t[i] &&
		    t[i + 2] == t[i]);

		if (c >= 0x80 || (c < 0x20 && c != '\t' && c != '\n' &&
		    c != '\r') || c == 0x7f)
			return i;
		/*
		 * A table header must name a key: toml++ 3.3 asserts (aborts)
		 * on "[!x]" instead of reporting it.
		 */
		if (c == '[' && bol) {
			j = i + 1;
			if (j < len && t[j] == '[')
				j++;
			while (j < len && (t[j] == ' ' || t[j] == '\t'))
				j++;
			if (j < len && !isalnum(static_cast<unsigned char>(t[j])) &&
			    t[j] != '_' && t[j] != '-' && t[j] != '"' &&
			    t[j] != '\'' && static_cast<unsigned char>(t[j]) < 0x80)
				return j;
		}
		if (c == '\n')
			bol = true;
		else if (c != ' ' && c != '\t' && c != '\r')
			bol = false;
		if (c == '#') {
			while (i < len && t[i] != '\n')
				i++;
		} else if (c == '"' || c == '\'') {
			size_t q = multi ? 3 : 1;

			for (i += q; i < len; i++) {
				if (!multi && t[i] == '\n')
					break;
				if (c == '"' && t[i] == '\\') {
					size_t j = i + 1;

					while (multi && j < len && (t[j] == ' ' ||
					    t[j] == '\t'))
						j++;
					if (!multi || j >= len || (t[j] != '\n' &&
					    t[j] != '\r')) {
						i++;
						continue;
					}
					while (j < len && (t[j] == ' ' ||
					    t[j] == '\t' || t[j] == '\n' ||
					    t[j] == '\r'))
						j++;
					if (j < len &&
					    static_cast<unsigned char>(t[j]) >= 0x80)
						return j;
					i = j - 1;
					continue;
				}
				if (t[i] == c && (!multi || (len - i >= 3 &&
				    t[i + 1] == c && t[i + 2] == c))) {
					i += multi ? 2 : 0;
					break;
				}
			}
			i++;
		} else
			i++;
	}
	return len;
}

int
toml_parse(const char *text, size_t len, const char *name,
    struct toml_doc **out, struct so_err *err)
{
	/* A UTF-8 byte order mark, as some Windows editors write: not text. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3;
		len -= 3;
	}
	size_t bad = refused_early(text, len);

	if (bad < len) {
		unsigned line = 1, col = 1;

		for (size_t i = 0; i < bad; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else if ((static_cast<unsigned char>(text[i]) & 0xc0) !=
			    0x80)
				col++;
		}
		unsigned char b = static_cast<unsigned char>(text[bad]);

		if (b >= 0x80)
			return so_error(err, SO_EPARSE, "%s:%u:%u: a non-ASCII "
			    "character outside a string or comment", name, line,
			    col);
		if (b < 0x20 || b == 0x7f)
			return so_error(err, SO_EPARSE, "%s:%u:%u: control "
			    "character 0x%02x (not allowed in TOML)", name,
			    line, col, b);
		return so_error(err, SO_EPARSE, "%s:%u:%u: a table header "
		    "must start with a key, not '%c'", name, line, col, b);
	}
	try {
		std::string_view source(text, len);
		std::string_view source_name(name);
#if TOML_EXCEPTIONS
		toml::table table;

		try {
			table = toml::parse(source, source_name);
		} catch (const toml::parse_error &e) {
			return parse_failed(name, e, err);
		}
#else
		toml::parse_result result = toml::parse(source, source_name);

		if (!result)
			return parse_failed(name, result.error(), err);
		const toml::table &table = result.table();
#endif
		auto doc = std::make_unique<toml_doc>();

		doc->root = convert(*doc, table).release();
		*out = doc.release();
		return 0;
	} catch (const nul_error &e) {
		return so_error(err, SO_EPARSE, "%s:%u:%u: string contains a "
		    "NUL character", name, static_cast<unsigned>(e.pos.line),
		    static_cast<unsigned>(e.pos.column));
	} catch (const std::bad_alloc &) {
		return so_error(err, SO_ENOMEM, "out of memory parsing \"%s\"",
		    name);
	} catch (const std::exception &e) {
		return so_error(err, SO_EPARSE, "%s: toml parser failed: %s",
		    name, e.what());
	} catch (...) {
		return so_error(err, SO_EPARSE, "%s: toml parser failed", name);
	}
}

int
toml_load(const char *path, struct toml_doc **out, struct so_err *err)
{
	try {
		file_ptr f(fopen(path, "rb"), fclose);
		std::string text;
		char buf[8192];
		size_t n;

		if (!f)
			return so_error(err, SO_EIO, "cannot open \"%s\": %s",
			    path, strerror(errno));
		while ((n = fread(buf, 1, sizeof buf, f.get())) > 0)
			text.append(buf, n);
		if (ferror(f.get()))
			return so_error(err, SO_EIO, "cannot read \"%s\": %s",
			    path, strerror(errno));
		return toml_parse(text.data(), text.size(), path, out, err);
	} catch (const std::bad_alloc &) {
		return so_error(err, SO_ENOMEM, "out of memory reading \"%s\"",
		    path);
	} catch (...) {
		return so_error(err, SO_EIO, "cannot read \"%s\"", path);
	}
}

const cJSON *
toml_root(const struct toml_doc *doc)
{
	return doc->root;
}

int
toml_pos(const struct toml_doc *doc, const cJSON *item, int *line, int *col)
{
	auto it = doc->info.find(item);

	if (it == doc->info.end())
		return SO_ENOTFOUND;
	*line = static_cast<int>(it->second.pos.line);
	*col = static_cast<int>(it->second.pos.column);
	return 0;
}

int
toml_key_pos(const struct toml_doc *doc, const cJSON *item, int *line,
    int *col)
{
	auto it = doc->info.find(item);

	if (it == doc->info.end() || it->second.key_pos.line == 0)
		return SO_ENOTFOUND;
	*line = static_cast<int>(it->second.key_pos.line);
	*col = static_cast<int>(it->second.key_pos.column);
	return 0;
}

enum toml_type
toml_type(const struct toml_doc *doc, const cJSON *item)
{
	auto it = doc->info.find(item);

	return it == doc->info.end() ? TOML_NONE : it->second.type;
}

const char *
toml_int_text(const struct toml_doc *doc, const cJSON *item)
{
	auto it = doc->info.find(item);

	return it == doc->info.end() || it->second.type != TOML_INTEGER ?
	    nullptr : it->second.text.c_str();
}

const char *
toml_type_name(enum toml_type type)
{
	switch (type) {
	case TOML_NONE:		return "nothing";
	case TOML_TABLE:	return "table";
	case TOML_ARRAY:	return "array";
	case TOML_STRING:	return "string";
	case TOML_INTEGER:	return "integer";
	case TOML_FLOAT:	return "float";
	case TOML_BOOLEAN:	return "boolean";
	case TOML_DATE:		return "date";
	case TOML_TIME:		return "time";
	case TOML_DATE_TIME:	return "date-time";
	}
	return "unknown";
}

void
toml_free(struct toml_doc *doc)
{
	delete doc;
}
