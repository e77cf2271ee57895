/*
 * Unit tests for toml++ as seqorch includes it (orchestrator/tomlpp.h),
 * built with UBSan that stops at the first undefined behaviour: every
 * Unicode code point goes through the character classes the parser asks
 * about, and inputs that reached __builtin_unreachable() in toml++ 3.3 are
 * parsed with no front end before them.
 */
#include <string_view>

#include "tomlpp.h"

/* Last: cmocka's fail() macro would break the C++ headers. */
extern "C" {
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
}

namespace impl = toml::impl;

static void
test_every_code_point(void **state)
{
	unsigned long ws = 0, other = 0;

	(void)state;
	for (char32_t c = 0; c <= 0x10FFFF; c++) {
		if (c >= 0x80 && impl::is_non_ascii_horizontal_whitespace(c))
			ws++;
		/* These call the function above on non-ASCII input. */
		other += impl::is_whitespace(c) + impl::is_value_terminator(c) +
		    impl::is_bare_key_character(c);
	}
	/* "20 code units from 8 ranges", as the generated header says. */
	assert_int_equal(ws, 20);
	assert_true(other > 0);
	assert_true(impl::is_non_ascii_horizontal_whitespace(U'\u3000'));
	assert_true(impl::is_non_ascii_horizontal_whitespace(U'\u200B'));
	assert_true(impl::is_non_ascii_horizontal_whitespace(U'\uFEFF'));
	assert_false(impl::is_non_ascii_horizontal_whitespace(U'\uFED7'));
	assert_false(impl::is_non_ascii_horizontal_whitespace(U'\u0400'));
	assert_false(impl::is_non_ascii_horizontal_whitespace(U'\u2D0E'));
	assert_false(impl::is_horizontal_whitespace(U'\u2028'));
}

static bool
parses(std::string_view text)
{
	using namespace std::string_view_literals;

#if TOML_EXCEPTIONS
	try {
		(void)toml::parse(text, "t.toml"sv);
		return true;
	} catch (const toml::parse_error &) {
		return false;
	}
#else
	return static_cast<bool>(toml::parse(text, "t.toml"sv));
#endif
}

static void
test_inputs_that_reached_unreachable(void **state)
{
	using namespace std::string_view_literals;

	(void)state;
	/* Found by make fuzz (tests/fuzz/seeds-config/toml-unreachable-*). */
	assert_false(parses("s=5$/rs=\"s=tgenoa\xef\xb3\xbfs=:t:rs=tg=:"sv));
	assert_false(parses("port = 444\x01\0wor\0\0004444[ss\x01\0\0\"44"
	    "YY\xef\xbb\x97YY3\n"sv));
	assert_false(parses("\n\xef\xba\xbf"sv));
	assert_false(parses("a = 1 \xd0\x80\n"sv));
	/* TOML's own whitespace is tab and space; others are errors. */
	assert_false(parses("a\xe3\x80\x80= 1\n"sv));
	assert_true(parses("a\t= 1 \t\n"sv));
	assert_true(parses("a = \"\xd0\x80\xef\xbb\x97\" # \xe2\xb4\x8e\n"sv));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_code_point),
		cmocka_unit_test(test_inputs_that_reached_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
