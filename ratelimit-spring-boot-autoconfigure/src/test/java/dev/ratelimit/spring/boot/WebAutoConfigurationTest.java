package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.servlet.IdentityResolver;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.spring.boot.actuate.RateLimitActuatorAutoConfiguration;
import dev.ratelimit.spring.boot.actuate.RateLimitEndpoint;
import dev.ratelimit.spring.boot.web.reactive.Caller;
import dev.ratelimit.spring.boot.web.reactive.RateLimitWebFilter;
import dev.ratelimit.spring.boot.web.reactive.RateLimitedWebFilter;
import dev.ratelimit.spring.boot.web.reactive.ReactiveIdentityResolver;
import dev.ratelimit.spring.boot.web.reactive.ReactiveRateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.web.servlet.ServletRateLimitAutoConfiguration;
import java.security.Principal;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.web.server.WebFilter;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import reactor.core.publisher.Mono;

/** The conditions of the servlet, WebFlux and actuator auto-configurations. */
class WebAutoConfigurationTest {

    private static final AutoConfigurations ALL = AutoConfigurations.of(
            RateLimitAutoConfiguration.class,
            ServletRateLimitAutoConfiguration.class,
            ReactiveRateLimitAutoConfiguration.class,
            RateLimitActuatorAutoConfiguration.class);

    @Nested
    class Servlet {

        private final WebApplicationContextRunner runner = new WebApplicationContextRunner().withConfiguration(ALL);

        @Test
        void registersTheFilterAfterSpringSecurityOnTheConfiguredPaths() {
            runner.withPropertyValues("ratelimit.paths=/api/*,/v1/*").run(context -> {
                @SuppressWarnings("unchecked")
                FilterRegistrationBean<RateLimitFilter> registration =
                        context.getBean("rateLimitFilter", FilterRegistrationBean.class);
                assertThat(registration.getOrder()).isEqualTo(-99); // Spring Security's chain: -100
                assertThat(registration.getUrlPatterns()).containsExactly("/api/*", "/v1/*");
                // the defaults are package-private: named, not imported
                assertThat(context.getBean(IdentityResolver.class).getClass().getName())
                        .isEqualTo("dev.ratelimit.spring.boot.web.servlet.SecurityIdentityResolver");
                assertThat(context.getBean(TierResolver.class).getClass().getName())
                        .isEqualTo("dev.ratelimit.spring.boot.web.PrincipalTierResolver");
                assertThat(context).hasSingleBean(WebMvcConfigurer.class);
                assertThat(context).doesNotHaveBean(WebFilter.class);
            });
        }

        @Test
        void theDefaultResolverTakesTheAuthenticationsNameAndATierFromItsAuthority() {
            runner.run(context -> {
                IdentityResolver resolver = context.getBean(IdentityResolver.class);
                MockHttpServletRequest request = new MockHttpServletRequest();
                assertThat(resolver.resolve(request)).isNull();
                request.setUserPrincipal(new TestingAuthenticationToken(
                        "carol", null, AuthorityUtils.createAuthorityList("ROLE_USER", "TIER_pro")));
                assertThat(resolver.resolve(request)).isEqualTo(new IdentityResolver.Identity("carol", "pro"));
            });
        }

        @Test
        void theApplicationsResolversWin() {
            runner.withUserConfiguration(OwnServletResolvers.class).run(context -> {
                assertThat(context.getBean(IdentityResolver.class)).isSameAs(OwnServletResolvers.IDENTITY);
                assertThat(context.getBean(TierResolver.class)).isSameAs(OwnServletResolvers.TIERS);
            });
            runner.withUserConfiguration(OwnTierResolver.class).run(context -> {
                IdentityResolver resolver = context.getBean(IdentityResolver.class);
                MockHttpServletRequest request = new MockHttpServletRequest();
                request.setUserPrincipal(new TestingAuthenticationToken("dave", null, List.of()));
                assertThat(resolver.resolve(request)).isEqualTo(new IdentityResolver.Identity("dave", "gold"));
            });
        }

        @Test
        void theFilterCanBeSwitchedOffOrReplaced() {
            runner.withPropertyValues("ratelimit.filter.enabled=false")
                    .run(context -> assertThat(context).doesNotHaveBean("rateLimitFilter"));
            runner.withUserConfiguration(OwnFilterRegistration.class)
                    .run(context -> assertThat(context.getBean("rateLimitFilter"))
                            .isSameAs(OwnFilterRegistration.REGISTRATION));
        }

        @Test
        void withoutTheServletModuleNothingWebIsCreated() {
            runner.withClassLoader(new FilteredClassLoader(RateLimitFilter.class))
                    .run(context -> assertThat(context)
                            .hasSingleBean(RateLimiter.class)
                            .doesNotHaveBean("rateLimitFilter")
                            .doesNotHaveBean(IdentityResolver.class));
        }

        @Test
        void withoutSpringSecurityTheContainersPrincipalIsTheCaller() {
            runner.withClassLoader(new FilteredClassLoader("org.springframework.security"))
                    .run(context -> {
                        IdentityResolver resolver = context.getBean(IdentityResolver.class);
                        MockHttpServletRequest request = new MockHttpServletRequest();
                        Principal principal = () -> "erin";
                        request.setUserPrincipal(principal);
                        assertThat(resolver.resolve(request)).isEqualTo(new IdentityResolver.Identity("erin", null));
                    });
        }
    }

    @Nested
    class Reactive {

        private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
                .withConfiguration(ALL)
                .withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class));

        @Test
        void registersTheWebFilterAfterSpringSecurityAndKeepsInMemoryChecksOnTheEventLoop() {
            runner.run(context -> {
                RateLimitWebFilter filter = context.getBean(RateLimitWebFilter.class);
                assertThat(filter.getOrder()).isEqualTo(-99); // WebFilterChainProxy: -100
                assertThat(filter.toString()).contains("offload=false");
                assertThat(context).hasSingleBean(RateLimitedWebFilter.class);
                assertThat(context).hasSingleBean(ReactiveIdentityResolver.class);
                assertThat(context).doesNotHaveBean("rateLimitFilter").doesNotHaveBean(IdentityResolver.class);
            });
        }

        @Test
        void aStoreTheApplicationDefinesIsCalledOffTheEventLoop() {
            runner.withUserConfiguration(OwnStore.class)
                    .run(context -> assertThat(
                                    context.getBean(RateLimitWebFilter.class).toString())
                            .contains("offload=true"));
        }

        @Test
        void theApplicationsResolverAndFilterWin() {
            runner.withUserConfiguration(OwnReactiveResolver.class)
                    .run(context -> assertThat(context.getBean(ReactiveIdentityResolver.class))
                            .isSameAs(OwnReactiveResolver.RESOLVER));
            runner.withPropertyValues("ratelimit.filter.enabled=false")
                    .run(context -> assertThat(context).doesNotHaveBean(RateLimitWebFilter.class));
        }
    }

    @Nested
    class NotAWebApplication {

        @Test
        void onlyTheLimiterItsStoreAndPolicyAreCreated() {
            new ApplicationContextRunner()
                    .withConfiguration(ALL)
                    .run(context -> assertThat(context)
                            .hasSingleBean(RateLimiter.class)
                            .hasSingleBean(WindowStore.class)
                            .hasSingleBean(TierPolicy.class)
                            .doesNotHaveBean("rateLimitFilter")
                            .doesNotHaveBean(RateLimitWebFilter.class)
                            .doesNotHaveBean(TierResolver.class));
        }
    }

    @Nested
    class Actuator {

        private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(ALL);

        @Test
        void theHealthContributorIsThereUnlessSwitchedOffOrHealthIsMissing() {
            runner.run(context -> assertThat(context).hasBean("rateLimitHealthIndicator"));
            runner.withPropertyValues("management.health.ratelimit.enabled=false")
                    .run(context -> assertThat(context).doesNotHaveBean("rateLimitHealthIndicator"));
            runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                    .run(context -> assertThat(context).doesNotHaveBean("rateLimitHealthIndicator"));
        }

        @Test
        void theEndpointExistsOnlyWhereTheApplicationExposesIt() {
            runner.run(context -> assertThat(context).doesNotHaveBean(RateLimitEndpoint.class));
            runner.withPropertyValues("management.endpoints.web.exposure.include=health,ratelimit")
                    .run(context -> assertThat(context).hasSingleBean(RateLimitEndpoint.class));
            runner.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=ratelimit")
                    .run(context -> assertThat(context).hasSingleBean(RateLimitEndpoint.class));
        }

        @Test
        void withoutALimiterThereIsNoHealthNorEndpoint() {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(RateLimitActuatorAutoConfiguration.class))
                    .withPropertyValues("management.endpoints.web.exposure.include=ratelimit")
                    .run(context -> assertThat(context)
                            .doesNotHaveBean("rateLimitHealthIndicator")
                            .doesNotHaveBean(RateLimitEndpoint.class));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnServletResolvers {
        static final IdentityResolver IDENTITY = request -> new IdentityResolver.Identity("fixed", "pro");
        static final TierResolver TIERS = principal -> "pro";

        @Bean
        IdentityResolver myIdentityResolver() {
            return IDENTITY;
        }

        @Bean
        TierResolver myTierResolver() {
            return TIERS;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnTierResolver {
        @Bean
        TierResolver myTierResolver() {
            return principal -> "gold";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnFilterRegistration {
        static final FilterRegistrationBean<RateLimitFilter> REGISTRATION =
                new FilterRegistrationBean<>(new RateLimitFilter(
                        SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                                .build(),
                        TierPolicy.defaults()));

        @Bean
        FilterRegistrationBean<RateLimitFilter> rateLimitFilter() {
            return REGISTRATION;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnStore {
        @Bean
        WindowStore myStore() {
            return InMemoryWindowStore.create();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnReactiveResolver {
        static final ReactiveIdentityResolver RESOLVER = exchange -> Mono.just(new Caller("fixed", null, null));

        @Bean
        ReactiveIdentityResolver myResolver() {
            return RESOLVER;
        }
    }
}
