/*
 * template_each.h — include a template header once per value of a list
 * that is written once, as an X-macro, and also drives the dispatch.
 *
 * Before including, define:
 *   EACH_LIST(X)    X(v) for every value v (positive integer constants, at
 *                   most 16 of them); X may be given further arguments,
 *                   which the list passes on after v (for a dispatch)
 *   EACH_TEMPLATE   the template header, in quotes
 * The template sees the value as EACH_VALUE.  The preprocessor cannot loop
 * over a list, so this header walks the positions 1..16 and takes the
 * value at each from the list (padded with zeros: 0 ends it).
 */
#define EACH_COMMA_(v, ...) , v
#define EACH_VALUES_ 0 EACH_LIST(EACH_COMMA_), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define EACH_APPLY_(m, args) m args
#define EACH_AT_(i) EACH_APPLY_(EACH_GET_##i##_, (EACH_VALUES_))
#define EACH_GET_1_(_0, v, ...) v
#define EACH_GET_2_(_0, _1, v, ...) v
#define EACH_GET_3_(_0, _1, _2, v, ...) v
#define EACH_GET_4_(_0, _1, _2, _3, v, ...) v
#define EACH_GET_5_(_0, _1, _2, _3, _4, v, ...) v
#define EACH_GET_6_(_0, _1, _2, _3, _4, _5, v, ...) v
#define EACH_GET_7_(_0, _1, _2, _3, _4, _5, _6, v, ...) v
#define EACH_GET_8_(_0, _1, _2, _3, _4, _5, _6, _7, v, ...) v
#define EACH_GET_9_(_0, _1, _2, _3, _4, _5, _6, _7, _8, v, ...) v
#define EACH_GET_10_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, v, ...) v
#define EACH_GET_11_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, v, ...) v
#define EACH_GET_12_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, v, ...) v
#define EACH_GET_13_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, v, ...) v
#define EACH_GET_14_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, v, ...) v
#define EACH_GET_15_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, v, ...) v
#define EACH_GET_16_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, v, ...) v

#if EACH_AT_(1) > 0
#define EACH_VALUE EACH_AT_(1)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(2) > 0
#define EACH_VALUE EACH_AT_(2)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(3) > 0
#define EACH_VALUE EACH_AT_(3)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(4) > 0
#define EACH_VALUE EACH_AT_(4)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(5) > 0
#define EACH_VALUE EACH_AT_(5)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(6) > 0
#define EACH_VALUE EACH_AT_(6)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(7) > 0
#define EACH_VALUE EACH_AT_(7)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(8) > 0
#define EACH_VALUE EACH_AT_(8)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(9) > 0
#define EACH_VALUE EACH_AT_(9)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(10) > 0
#define EACH_VALUE EACH_AT_(10)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(11) > 0
#define EACH_VALUE EACH_AT_(11)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(12) > 0
#define EACH_VALUE EACH_AT_(12)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(13) > 0
#define EACH_VALUE EACH_AT_(13)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(14) > 0
#define EACH_VALUE EACH_AT_(14)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(15) > 0
#define EACH_VALUE EACH_AT_(15)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
#if EACH_AT_(16) > 0
#define EACH_VALUE EACH_AT_(16)
#include EACH_TEMPLATE
#undef EACH_VALUE
#endif
