/*
 * The coordinator's disassembly check (disasm.c) on one file, for
 * tests/test_27_apple.py: disasm OBJECT SYMBOL MNEMONIC...  runs the
 * command disasm_command builds (the host's objdump, as PATH finds it)
 * and prints "status N", then "no-symbol" or, for each mnemonic,
 * "MNEMONIC yes" or "MNEMONIC no" as disasm_find answers in the body.
 */
#include "disasm.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

int
main(int argc, char **argv)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	char buf[4096], *body;
	size_t n;
	FILE *p;
	int i, status;

	if (argc < 3)
		return 2;
	disasm_command(&cmd, argv[1], argv[2]);
	if ((p = popen(cmd.buf, "r")) == NULL)
		return 2;
	while ((n = fread(buf, 1, sizeof buf, p)) > 0)
		strbuf_add(&out, buf, n);
	status = pclose(p);
	printf("status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if ((body = disasm_body(out.buf ? out.buf : "", argv[2])) == NULL)
		puts("no-symbol");
	for (i = 3; body != NULL && i < argc; i++)
		printf("%s %s\n", argv[i], disasm_find(body, argv[i]) ?
		    "yes" : "no");
	free(body);
	strbuf_release(&out);
	strbuf_release(&cmd);
	return 0;
}
