/*
 * Fuzz target for cbox_elf_parse: arbitrary bytes as a whole file (file_size = len), then the
 * same bytes cut short to exercise -ENOBUFS. Every successful parse must satisfy the guarantees
 * the loader relies on when it maps the segments.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cbox/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

static void check_loads(const struct cbox_elf_info *e, uint64_t file_size)
{
	CHECK(e->nload >= 1 && e->nload <= CBOX_ELF_MAX_LOAD);
	for (uint32_t i = 0; i < e->nload; i++) {
		const struct cbox_elf_load *l = &e->load[i];
		CHECK(l->memsz > 0 && l->filesz <= l->memsz);
		CHECK(l->offset <= file_size && l->filesz <= file_size - l->offset);
		CHECK(((l->offset ^ l->vaddr) & (CBOX_ELF_PAGE_SIZE - 1)) == 0);
		CHECK(l->vaddr < CBOX_ELF_USER_TOP && l->memsz <= CBOX_ELF_USER_TOP - l->vaddr);
		CHECK((l->prot & ~7) == 0);
		CHECK(l->vaddr >= e->min_vaddr && l->vaddr + l->memsz <= e->max_vaddr);
		if (i > 0)
			CHECK(l->vaddr >= e->load[i - 1].vaddr + e->load[i - 1].memsz);
	}
}

static void check_ok(const struct cbox_elf_info *e, const uint8_t *data, size_t len,
                     uint64_t file_size)
{
	CHECK(e->type == CBOX_ELF_EXEC || e->type == CBOX_ELF_DYN);
	CHECK(e->phentsize == 56 && e->phnum >= 1 && e->phnum <= CBOX_ELF_MAX_PHNUM);
	CHECK(e->phoff <= len && (uint64_t)e->phnum * 56 <= len - e->phoff);
	check_loads(e, file_size);
	CHECK(e->min_vaddr % CBOX_ELF_PAGE_SIZE == 0 && e->max_vaddr % CBOX_ELF_PAGE_SIZE == 0);
	CHECK(e->min_vaddr < e->max_vaddr && e->max_vaddr <= CBOX_ELF_USER_TOP);
	CHECK(e->max_vaddr - e->min_vaddr < CBOX_ELF_MAX_SPAN);
	CHECK(e->align >= CBOX_ELF_PAGE_SIZE && e->align <= (1ULL << 30));
	CHECK((e->align & (e->align - 1)) == 0);
	CHECK(e->has_phdr_vaddr || e->phdr_vaddr == 0);
	if (e->has_interp) {
		CHECK(e->interp_len >= 2 && e->interp_len <= CBOX_ELF_INTERP_MAX);
		CHECK(e->interp_offset <= file_size &&
		      e->interp_len <= file_size - e->interp_offset);
		if (e->interp_offset + e->interp_len <= len)
			CHECK(cbox_elf_check_interp((const char *)data + e->interp_offset,
			                            e->interp_len) == 0);
	}
}

static struct cbox_elf_info info;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int rc = cbox_elf_parse(data, size, size, &info);
	CHECK(rc == 0 || rc == -ENOEXEC || rc == -EINVAL);
	if (rc == 0)
		check_ok(&info, data, size, size);

	/* A short buffer from a longer file: a verdict, or a request for more that a retry with
	 * exactly that much answers. */
	size_t len = size / 2;
	for (int round = 0; round < 3; round++) {
		rc = cbox_elf_parse(data, len, size, &info);
		if (rc != -ENOBUFS)
			break;
		/* At most two rounds: the ELF header first, then the program headers. */
		CHECK(round < 2 && info.need > len && info.need <= size);
		len = (size_t)info.need;
	}
	CHECK(rc == 0 || rc == -ENOEXEC || rc == -EINVAL);
	if (rc == 0)
		check_ok(&info, data, len, size);
	return 0;
}
