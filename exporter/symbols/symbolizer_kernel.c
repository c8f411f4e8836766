/*
 * symbolizer_kernel: what the kernel gives every process alike, named once
 * for all: kernel frames from kallsyms (asked of the source at the first
 * kernel frame) and the vDSO, read from the exporter's own memory.
 */
#include "exporter/symbols/symbolizer_internal.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "common/heap_bound.h"
#include "common/log.h"
#include "common/mono_clock.h"
#include "exporter/symbols/elf_symbols.h"
#include "exporter/symbols/kallsyms.h"
#include "exporter/symbols/proc_source.h"

/* The vDSO image is a few pages; a header claiming more is not believed. */
#define SYM_VDSO_MAX (1u << 20)

static const char SYM_KERNEL[] = "[kernel.kallsyms]";
static const char SYM_KERNEL_UNNAMED[] = "[kernel]";

static void sym_load_kallsyms(struct symbolizer *s);
static void sym_report_kallsyms(struct symbolizer *s);

int symbolizer_kernel_frame(struct symbolizer *s, uint64_t addr, struct frame *out)
{
	struct kallsyms_result r;
	uint64_t base;
	const char *function, *module = SYM_KERNEL;

	sym_load_kallsyms(s);
	sym_report_kallsyms(s);
	base = kallsyms_core_base(s->kallsyms);
	sym_frame_unknown(out, addr, true);
	s->stats.lookups++;
	if (kallsyms_lookup(s->kallsyms, addr, &r) == 0) {
		function = sym_intern(s, r.name);
		if (r.module)
			module = sym_intern(s, r.module);
		out->symbolized = true;
		out->module_offset = addr - r.module_base;
	} else {
		function = s->kernel_addresses ? sym_internf(s, "[kernel]+0x%" PRIx64, addr)
					       : SYM_KERNEL_UNNAMED;
		out->module_offset = base && addr >= base ? addr - base : 0;
		s->stats.misses++;
	}
	/* A raw kernel address tells where the kernel is (KASLR) to whoever reads
	 * the outputs: only the offset within its module, unless asked. */
	if (!s->kernel_addresses)
		out->address = out->module_offset;
	out->module = module;
	if (!function || !module) {
		sym_frame_unknown(out, addr, true);
		return -ENOMEM;
	}
	out->function = function;
	return 0;
}

void symbolizer_set_kernel_addresses(struct symbolizer *s, bool on)
{
	s->kernel_addresses = on;
}

bool symbolizer_load_kernel_symbols(struct symbolizer *s)
{
	sym_load_kallsyms(s);
	sym_report_kallsyms(s);
	return s->kallsyms_done;
}

const char *symbolizer_kernel_note(const struct symbolizer *s)
{
	return s->kernel_note[0] ? s->kernel_note : NULL;
}

/*
 * kallsyms at the first kernel frame, not at creation: the exporter starts
 * before the loader that hands it over. Asked again while the loader does not
 * answer; any other failure is final and explained by symbolizer_kernel_note().
 */
static void sym_load_kallsyms(struct symbolizer *s)
{
	uint64_t now;
	char err[200];
	int fd, rc;

	if (s->kallsyms_done)
		return;
	now = mono_ns();
	if (now < s->kallsyms_retry_ns)
		return;
	fd = proc_source_open_kallsyms(s->src);
	if (fd == -EAGAIN) {
		s->kallsyms_retry_ns = now + SYM_AGAIN_RETRY_NS;
		snprintf(s->kernel_note, sizeof(s->kernel_note), "kallsyms not yet received from the loader");
		return;
	}
	s->kallsyms_done = true;
	s->kernel_gen = ++s->gen_counter;
	if (fd < 0) {
		snprintf(s->kernel_note, sizeof(s->kernel_note), "kallsyms unreadable: %s", strerror(-fd));
		return;
	}
	rc = kallsyms_load_fd(fd, "kallsyms", &s->kallsyms, err, sizeof(err));
	close(fd);
	/* The parse held the text and every line (~3x the table): give the heap's
	 * free pages back now rather than keep that high-water mark for the run. */
	(void)heap_bound_trim();
	if (rc != 0) {
		snprintf(s->kernel_note, sizeof(s->kernel_note), "kallsyms unreadable: %s", err);
		return;
	}
	s->kernel_note[0] = '\0';
	if (kallsyms_restricted(s->kallsyms))
		snprintf(s->kernel_note, sizeof(s->kernel_note),
			 "kallsyms shows only zero addresses (kptr_restrict): reading it needs CAP_SYSLOG");
}

/* Said once, when kallsyms has been settled: why kernel frames will be unnamed. */
static void sym_report_kallsyms(struct symbolizer *s)
{
	if (s->kallsyms_reported || !s->kallsyms_done)
		return;
	s->kallsyms_reported = true;
	if (s->kernel_note[0] != '\0')
		log_warn("kernel frames unnamed: %s", s->kernel_note);
	else
		log_debug("kernel symbols: %zu", kallsyms_count(s->kallsyms));
}

/* The vDSO image's extent from its own ELF headers (it is the kernel's, whole
 * in memory): the end of the section headers or of the last segment. 0 if odd. */
static size_t sym_vdso_size(uint64_t base)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(uintptr_t)base;
	const Elf64_Phdr *ph;
	uint64_t end;
	unsigned i;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > SYM_VDSO_MAX)
		return 0;
	end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	ph = (const Elf64_Phdr *)(uintptr_t)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum && i < 64; i++) {
		if (ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	}
	return end <= SYM_VDSO_MAX ? (size_t)end : 0;
}

/* Every process maps the same vDSO as ours: read it once from our own memory. */
void sym_load_vdso(struct symbolizer *s)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	size_t size = base ? sym_vdso_size(base) : 0;
	char err[256];

	s->vdso_size = size;
	if (size > 0 &&
	    elf_symbols_open_mem((const void *)(uintptr_t)base, size, &s->vdso, err, sizeof(err)) == 0 &&
	    elf_symbols_build_id(s->vdso))
		s->vdso_build_id = sym_intern(s, elf_symbols_build_id(s->vdso));
}
