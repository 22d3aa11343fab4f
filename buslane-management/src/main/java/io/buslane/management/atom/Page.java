package io.buslane.management.atom;

import java.util.List;

/**
 * One page of a listing, from the request's {@code $skip} (default 0) and {@code $top} (default and maximum 100,
 * as the service pages).
 *
 * @param items    the page's items
 * @param nextSkip the {@code $skip} of the next page, or -1 when there is none
 * @param top      the page size
 */
record Page<T>(List<T> items, int nextSkip, int top) {

    static final int MAX_TOP = 100;

    static <T> Page<T> of(List<T> all, AdminRequest request) {
        int skip = param(request, "$skip", 0);
        int top = Math.min(param(request, "$top", MAX_TOP), MAX_TOP);
        if (top < 1) {
            throw new IllegalArgumentException("$top must be at least 1.");
        }
        int from = Math.min(skip, all.size());
        int to = (int) Math.min(all.size(), (long) from + top);
        return new Page<>(List.copyOf(all.subList(from, to)), to < all.size() ? to : -1, top);
    }

    private static int param(AdminRequest request, String name, int defaultValue) {
        String v = request.queryParam(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a non-negative integer, was '" + v + "'.");
        }
    }
}
