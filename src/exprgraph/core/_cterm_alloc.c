/* _cterm_alloc.c: the memory of terms (see _cterm.c): blocks of whole 8-byte words carved from 2 MiB chunks
   of one reserved range of address space.

   A large build makes millions of terms, then drops them and builds the next expression. CPython's
   allocator rounds a block to 16 bytes and gives an arena back as soon as it empties, so the next
   build faults its pages in again. Here a block is the term's exact size in words (a unary term or a
   leaf: 72 bytes, where CPython's allocator rounds to 80), and a chunk that empties keeps its pages
   until the kernel wants them (below). Huge pages were measured and left out: transparent huge pages
   made a repeated build up to 10% quicker but the first build of a fresh process 15-40% slower (trig at
   10^6 and 10^5: each fault zeroes 2 MiB).

   Each chunk holds blocks of one size: a bump offset, a list of the blocks freed (linked through their
   first word) and a count of live blocks. The chunks of a size with room form a list (a chunk that
   gets a block back goes to its front). A chunk that empties is given back to the system (MADV_FREE:
   the kernel takes its pages when it needs them, and until then a chunk reused costs no page fault,
   as a freed heap does for malloc) and goes to the list of empty chunks, which are reused first;
   the one chunk of a size still being carved stays when it empties, so a loop that makes and drops
   one term at a chunk's edge does not call the system each time. Larger blocks (a term of more than
   8 words after its fixed part: a sum of 9 operands, say), and every block when the range cannot be
   reserved (no mmap, a strict overcommit policy), come from PyObject_Malloc; term_mem_free tells them
   apart by their address. Blocks are reported to tracemalloc (its default domain), as
   PyObject_Malloc's are.

   Needs the GIL (terms are made and freed under it). */

#include "_cterm.h"
#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_DONTNEED) && UINTPTR_MAX > 0xFFFFFFFFu
#define TERM_CHUNKS 1
#endif

#ifdef TERM_CHUNKS

#define CHUNK_SHIFT 21
#define CHUNK_BYTES ((size_t)1 << CHUNK_SHIFT)
/* the most chunks the range holds (64 GiB of address space: reserved, not used until written) */
#define MAX_CHUNKS ((size_t)1 << 15)
/* the fewest worth reserving (when the system refuses larger ranges) */
#define MIN_CHUNKS ((size_t)1 << 9)
/* blocks of at most this many bytes come from chunks (a term of up to 8 words after its fixed part: the
   leaves and the terms of few operands that make most of a large build); each size in use keeps a chunk
   of its own, so few sizes keep little memory when few terms are alive */
#define MAX_BLOCK 128
#define N_SIZES (MAX_BLOCK / 8 + 1)
#define NONE (-1)

typedef struct {
    void *freed;   /* the blocks given back, linked through their first word */
    uint32_t bump; /* bytes handed out from the chunk's start */
    uint32_t live; /* blocks in use */
    int32_t words; /* the block size in words; 0 for an empty chunk */
    int32_t prev, next; /* neighbours in its size's list of chunks with room, or in the list of empty chunks */
} Chunk;

static char *Range = NULL;     /* the reserved range, CHUNK_BYTES-aligned */
static size_t RangeChunks = 0; /* its chunks */
static size_t Carved = 0;      /* chunks used at least once (the rest were never written) */
static Chunk *Chunks = NULL;   /* their records */
static int32_t Room[N_SIZES];  /* per size in words: the first chunk with room, or NONE */
static int32_t Empty = NONE;   /* the empty chunks (linked by next) */
static int RangeTried = 0;

/* reserve the range (the largest the system grants, down to MIN_CHUNKS); 0 when there is none */
static int
range_init(void)
{
    RangeTried = 1;
    for (size_t n = MAX_CHUNKS; n >= MIN_CHUNKS; n /= 2) {
        size_t bytes = n * CHUNK_BYTES;
        char *p = (char *)mmap(NULL, bytes + CHUNK_BYTES, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            continue;
        Chunk *records = (Chunk *)PyMem_Calloc(n, sizeof(Chunk));
        if (records == NULL) {
            munmap(p, bytes + CHUNK_BYTES);
            return 0;
        }
        char *aligned = (char *)(((uintptr_t)p + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1));
        if (aligned > p) /* the unaligned ends back to the system */
            munmap(p, (size_t)(aligned - p));
        if (aligned + bytes < p + bytes + CHUNK_BYTES)
            munmap(aligned + bytes, (size_t)(p + bytes + CHUNK_BYTES - (aligned + bytes)));
        Range = aligned;
        RangeChunks = n;
        Chunks = records;
        for (size_t k = 0; k < N_SIZES; k++)
            Room[k] = NONE;
        return 1;
    }
    return 0;
}

/* take chunk c off the list whose head is *head */
static void
unlink_chunk(int32_t *head, int32_t c)
{
    Chunk *m = &Chunks[c];
    if (m->prev != NONE)
        Chunks[m->prev].next = m->next;
    else
        *head = m->next;
    if (m->next != NONE)
        Chunks[m->next].prev = m->prev;
    m->prev = m->next = NONE;
}

/* put chunk c at the front of the list whose head is *head */
static void
push_chunk(int32_t *head, int32_t c)
{
    Chunk *m = &Chunks[c];
    m->prev = NONE;
    m->next = *head;
    if (*head != NONE)
        Chunks[*head].prev = c;
    *head = c;
}

/* a chunk for blocks of `words` words, at the front of its size's list; NONE when the range is full */
static int32_t
take_chunk(int32_t words)
{
    int32_t c = Empty;
    if (c != NONE)
        unlink_chunk(&Empty, c);
    else if (Carved < RangeChunks)
        c = (int32_t)Carved++;
    else
        return NONE;
    Chunk *m = &Chunks[c];
    m->freed = NULL;
    m->bump = 0;
    m->live = 0;
    m->words = words;
    push_chunk(&Room[words], c);
    return c;
}

/* whether chunk c has no block left to hand out */
static inline int
chunk_full(const Chunk *m)
{
    return m->freed == NULL && m->bump + (uint32_t)m->words * 8 > CHUNK_BYTES;
}

/* A block of `bytes` bytes for a term (its contents undefined), or NULL with MemoryError set. */
void *
term_mem_alloc(size_t bytes)
{
    size_t words = (bytes + 7) / 8;
    if (words >= N_SIZES || (Range == NULL && (RangeTried || !range_init()))) {
        void *p = PyObject_Malloc(bytes);
        if (p == NULL)
            PyErr_NoMemory();
        return p;
    }
    int32_t c = Room[words];
    if (c == NONE && (c = take_chunk((int32_t)words)) == NONE) {
        void *p = PyObject_Malloc(bytes); /* the range is full */
        if (p == NULL)
            PyErr_NoMemory();
        return p;
    }
    Chunk *m = &Chunks[c];
    void *p;
    if (m->freed != NULL) {
        p = m->freed;
        m->freed = *(void **)p;
    } else {
        p = Range + ((size_t)c << CHUNK_SHIFT) + m->bump;
        m->bump += (uint32_t)words * 8;
    }
    m->live++;
    if (chunk_full(m))
        unlink_chunk(&Room[words], c);
    (void)PyTraceMalloc_Track(0, (uintptr_t)p, words * 8);
    return p;
}

/* give back chunk c, empty (its pages to the system when it wants them) */
static void
release_chunk(int32_t c)
{
    char *start = Range + ((size_t)c << CHUNK_SHIFT);
#ifdef MADV_FREE
    if (madvise(start, CHUNK_BYTES, MADV_FREE) != 0)
#endif
        (void)madvise(start, CHUNK_BYTES, MADV_DONTNEED);
    Chunks[c].words = 0;
    push_chunk(&Empty, c);
}

/* Free a block of term_mem_alloc (the configured term class's tp_free). */
void
term_mem_free(void *p)
{
    if (Range == NULL || (char *)p < Range || (char *)p >= Range + Carved * CHUNK_BYTES) {
        PyObject_Free(p);
        return;
    }
    (void)PyTraceMalloc_Untrack(0, (uintptr_t)p);
    int32_t c = (int32_t)(((char *)p - Range) >> CHUNK_SHIFT);
    Chunk *m = &Chunks[c];
    int was_full = chunk_full(m);
    *(void **)p = m->freed;
    m->freed = p;
    m->live--;
    if (was_full) {
        push_chunk(&Room[m->words], c); /* room again */
    } else if (m->live == 0 && m->bump + (uint32_t)m->words * 8 > CHUNK_BYTES) {
        /* empty and carved to its end: back to the system (the one chunk of a size still being carved stays) */
        unlink_chunk(&Room[m->words], c);
        release_chunk(c);
    }
}

/* the chunks carved and those empty now (for tests: a chunk that empties goes back) */
void
term_mem_stats(size_t *carved, size_t *empty)
{
    size_t e = 0;
    for (int32_t c = Empty; c != NONE; c = Chunks[c].next)
        e++;
    *carved = Carved;
    *empty = e;
}

#else /* no chunks on this system: CPython's allocator */

void *
term_mem_alloc(size_t bytes)
{
    void *p = PyObject_Malloc(bytes);
    if (p == NULL)
        PyErr_NoMemory();
    return p;
}

void
term_mem_free(void *p)
{
    PyObject_Free(p);
}

void
term_mem_stats(size_t *carved, size_t *empty)
{
    *carved = 0;
    *empty = 0;
}

#endif
