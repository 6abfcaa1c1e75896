// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cppwork - a C++ workload whose hot functions have mangled names (a class
 * template's member, a static member taking a std::vector), to test that
 * sampled frames are demangled, from .symtab or from a separate debug file.
 *
 *   cppwork [--seconds S] [--delay-ms MS]
 *
 * tmabpf_demo::Matrix<float>::multiply_trace() takes most of the CPU time,
 * tmabpf_demo::Tokenizer::score() most of the rest.  Built with frame
 * pointers (-fno-omit-frame-pointer).
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <unistd.h>

namespace tmabpf_demo {

template <typename T> class Matrix {
public:
	explicit Matrix(int n) : n_(n), v_(static_cast<size_t>(n) * n, T(1)) {}
	__attribute__((noinline)) T multiply_trace(const Matrix &b) const
	{
		T sum = 0;
		for (int i = 0; i < n_; i++)
			for (int k = 0; k < n_; k++)
				sum += v_[i * n_ + k] * b.v_[k * n_ + i];
		return sum;
	}

private:
	int n_;
	std::vector<T> v_;
};

struct Tokenizer {
	__attribute__((noinline)) static unsigned long score(const std::vector<int> &ids, int rounds)
	{
		unsigned long h = 1469598103934665603UL;
		for (int r = 0; r < rounds; r++)
			for (int id : ids) {
				h = (h ^ static_cast<unsigned long>(id)) * 1099511628211UL;
				__asm__ volatile("" : "+r"(h));
			}
		return h;
	}
};

} // namespace tmabpf_demo

int main(int argc, char **argv)
{
	double seconds = 3;
	int delay_ms = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--delay-ms"))
			delay_ms = atoi(argv[i + 1]);
		else
			return 2;
	}
	if (delay_ms)
		std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
	tmabpf_demo::Matrix<float> a(96), b(96);
	std::vector<int> ids(4096);
	for (size_t i = 0; i < ids.size(); i++)
		ids[i] = static_cast<int>(i * 7);
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	double sink = 0;
	unsigned long rounds = 0;
	while (std::chrono::steady_clock::now() < end) {
		for (int k = 0; k < 16; k++)
			sink += a.multiply_trace(b);
		sink += static_cast<double>(tmabpf_demo::Tokenizer::score(ids, 1) & 1);
		rounds++;
	}
	printf("{\"pid\": %d, \"rounds\": %lu, \"sink\": %g}\n", getpid(), rounds, sink);
	return 0;
}
