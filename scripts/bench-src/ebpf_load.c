// SPDX-License-Identifier: GPL-2.0
/*
 * ebpf_load OBJECT PROGRAM -- COMMAND...
 *
 * Load one program of an eBPF object with libbpf, attach it where its
 * section says (raw_tracepoint/, tracepoint/, kprobe/), run COMMAND while it
 * is attached, detach, and exit with COMMAND's status.  Before COMMAND, one
 * line on stderr says what is attached: its instructions and whether and
 * how large the kernel JIT-compiled it.  For the benchmark (scripts/bench).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int print_warnings(enum libbpf_print_level level, const char *fmt,
			  va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

/* The programs' global "matched", from the object's .bss map. */
static void report_matched(struct bpf_object *obj)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
	__u64 matched = 0;
	__u32 zero = 0;

	if (!bss || bpf_map_lookup_elem(bpf_map__fd(bss), &zero, &matched)) {
		fprintf(stderr, "ebpf_load: cannot read the match counter\n");
		return;
	}
	fprintf(stderr, "ebpf_load: matched %llu\n", (unsigned long long)matched);
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	struct bpf_link *link;
	int status, err;
	pid_t pid;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: %s OBJECT PROGRAM -- COMMAND...\n", argv[0]);
		return 2;
	}
	libbpf_set_print(print_warnings);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "ebpf_load: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, argv[2]);
	if (!prog) {
		fprintf(stderr, "ebpf_load: no program %s in %s\n", argv[2], argv[1]);
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "ebpf_load: loading %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	link = bpf_program__attach(prog);
	if (!link) {
		fprintf(stderr, "ebpf_load: attaching %s (%s): %s\n", argv[2],
			bpf_program__section_name(prog), strerror(errno));
		return 1;
	}
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &info_len)) {
		fprintf(stderr, "ebpf_load: no info on %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	/* An interpreted program would be measured as if it were JIT'ed. */
	if (!info.jited_prog_len) {
		fprintf(stderr, "ebpf_load: %s is not JIT-compiled\n", argv[2]);
		return 1;
	}
	fprintf(stderr, "ebpf_load: %s attached at %s, insns %u, jited %u bytes\n",
		argv[2], bpf_program__section_name(prog),
		info.xlated_prog_len / 8, info.jited_prog_len);
	fflush(stderr);

	pid = fork();
	if (pid == 0) {
		execvp(argv[4], argv + 4);
		fprintf(stderr, "ebpf_load: %s: %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		perror("ebpf_load");
		status = 1 << 8;
	}
	bpf_link__destroy(link);
	report_matched(obj);
	bpf_object__close(obj);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
